import { describe, expect, it } from '@jest/globals';
import type { ArgumentMetadata } from '@nestjs/common';
import {
  AccountParams,
  TransactionParams,
} from '#src/open-banking/accounts/dto/account-params.dto.js';
import type { ProblemException } from '#src/platform/errors/problem.js';
import { createValidationPipe } from '#src/platform/errors/validation.pipe.js';

/** What the pipe makes of a value: the instance it gives, or the problem it throws. */
async function outcome(value: object, metadata: ArgumentMetadata) {
  try {
    const given = (await createValidationPipe().transform(value, metadata)) as object;
    return { instanceOf: given.constructor.name, given: { ...given } };
  } catch (error) {
    const { status, title, errors, detail } = (error as ProblemException).init;
    return { status, title, errors, detail: detail?.replace('request query', 'request path') };
  }
}

describe('path parameters whose rules are contract schemas', () => {
  const values = [
    { accountId: 'acc-0001', transactionId: 'trx-0001-2024-03-01' },
    { accountId: 'a b', transactionId: 'x'.repeat(129) },
    { accountId: '', transactionId: 'trx~1' },
    { accountId: 'acc-0001', transactionId: 'trx-1', extra: 'x' },
    { accountId: 'acc-0001' },
  ];

  it('are answered word for word as class-validator answers the same class, and given as an instance of it', async () => {
    for (const metatype of [TransactionParams, AccountParams])
      for (const value of values) {
        const path = await outcome(value, { type: 'param', metatype });
        // The same class and value through class-transformer and class-validator (a query takes that way).
        const usual = await outcome(value, { type: 'query', metatype });
        expect({ metatype: metatype.name, value, path }).toEqual({
          metatype: metatype.name,
          value,
          path: usual,
        });
      }
  });

  it('refuse what the schema refuses, naming the field', async () => {
    expect(
      await outcome({ accountId: 'a b' }, { type: 'param', metatype: AccountParams }),
    ).toMatchObject({
      status: 400,
      detail: 'The request path has 1 invalid field: accountId',
      errors: [{ field: 'accountId', reason: expect.stringMatching(/pattern/) }],
    });
  });
});
