import { describe, expect, it } from '@jest/globals';
import { decodeFormBody, FormBodyError } from '#src/sandbox/card/form-body.js';

const lists = (field: string) => field === 'domain_names';

describe('form bodies with bracket nesting, in the three spellings the provider accepts', () => {
  it('reads objects from raw and percent-encoded brackets alike', () => {
    const expected = { amount: '100', metadata: { order: 'A 1', 'a/b': 'x&y' } };
    expect(decodeFormBody('amount=100&metadata[order]=A+1&metadata[a%2Fb]=x%26y')).toEqual(
      expected,
    );
    expect(
      decodeFormBody('amount=100&metadata%5Border%5D=A%201&metadata%5Ba%2Fb%5D=x%26y'),
    ).toEqual(expected);
  });

  it('reads lists as a[] and as numeric indices, raw or percent-encoded', () => {
    const expected = { domain_names: ['a.example', 'b.example'] };
    expect(decodeFormBody('domain_names[]=a.example&domain_names[]=b.example', lists)).toEqual(
      expected,
    );
    expect(
      decodeFormBody('domain_names%5B%5D=a.example&domain_names%5B%5D=b.example', lists),
    ).toEqual(expected);
    expect(
      decodeFormBody('domain_names%5B1%5D=b.example&domain_names%5B0%5D=a.example', lists),
    ).toEqual(expected);
    expect(decodeFormBody('domain_names[0]=a.example&domain_names[1]=b.example', lists)).toEqual(
      expected,
    );
  });

  it('reads objects inside lists', () => {
    expect(decodeFormBody('items[0][name]=x&items[0][qty]=2&items[1][name]=y', () => true)).toEqual(
      {
        items: [{ name: 'x', qty: '2' }, { name: 'y' }],
      },
    );
  });

  it('refuses a field given twice, a hole in a list and a key that is not bracket notation, naming the field', () => {
    const fieldOf = (text: string) => {
      try {
        decodeFormBody(text, lists);
      } catch (error) {
        if (error instanceof FormBodyError) return error.field;
        throw error;
      }
      return undefined;
    };
    expect(fieldOf('amount=1&amount=2')).toBe('amount');
    expect(fieldOf('metadata[k]=1&metadata[k]=2')).toBe('metadata');
    expect(fieldOf('domain_names[0]=a&domain_names[2]=c')).toBe('domain_names');
    expect(fieldOf('metadata[k=1')).toBe('metadata[k');
    expect(fieldOf('metadata=1&metadata[k]=2')).toBe('metadata');
    expect(fieldOf('bad=%E0%A4%A')).toBe('bad');
  });
});
