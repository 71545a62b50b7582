import { describe, expect, it } from '@jest/globals';
import { StatementGroup } from '../../src/platform/database/statement-group.js';

describe('a group write (StatementGroup)', () => {
  /** A statement that takes a tick and answers each item doubled; records what each send carried. */
  const doubling = (sends: number[][], max?: number) =>
    new StatementGroup<number, number>(
      async (items) => {
        sends.push(items);
        await new Promise((done) => setImmediate(done));
        return items.map((item) => item * 2);
      },
      'doubling',
      max,
    );

  it('sends a lone call at once, and the calls that arrive meanwhile together by the next statement', async () => {
    const sends: number[][] = [];
    const sut = doubling(sends);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => sut.run(i)));
    expect(results).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(sends).toEqual([[0], [1, 2, 3, 4, 5, 6, 7, 8, 9]]);
  });

  it('writes the next statement before the callers of the one that answered resume', async () => {
    const events: string[] = [];
    const sut = new StatementGroup<number, number>(async (items) => {
      await Promise.resolve(); // written a turn after it is asked for, as a pool hands a connection over
      events.push(`written ${items.join(',')}`);
      await new Promise((done) => setImmediate(done));
      return items;
    }, 'ordered');
    const first = sut.run(0).then(() => events.push('resumed 0'));
    const second = sut.run(1).then(() => events.push('resumed 1'));
    await Promise.all([first, second]);
    expect(events).toEqual(['written 0', 'written 1', 'resumed 0', 'resumed 1']);
  });

  it('carries at most `max` items a statement', async () => {
    const sends: number[][] = [];
    const sut = doubling(sends, 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => sut.run(i)));
    expect(sends).toEqual([[0], [1, 2, 3, 4], [5, 6, 7, 8], [9]]);
  });

  it('fails every call of a failed statement, and only those', async () => {
    const sut = new StatementGroup<number, number>(async (items) => {
      await new Promise((done) => setImmediate(done));
      if (items.includes(3)) throw new Error('refused');
      return items;
    }, 'failing');
    const results = await Promise.allSettled([sut.run(1), sut.run(2), sut.run(3)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    await expect(sut.run(4)).resolves.toBe(4);
  });

  it('fails the calls of a statement that answers another number of rows than it was given', async () => {
    const sut = new StatementGroup<number, number>(async (items) => items.slice(1), 'short');
    await expect(sut.run(1)).rejects.toThrow('answered 0 of 1 rows');
  });
});
