import { describe, expect, it } from '@jest/globals';
import { until } from '../support/chaos.js';
import {
  CompletionQueue,
  type Completion,
  type CompletionParams,
} from '#src/audit/trail/completion-queue.js';

const completion = (id: string): Completion => ({
  id,
  outcome: 'ok',
  upstreamStatus: 200,
  latencyMs: 3,
});
/** Once every promise reaction already queued has run (a flush that wrongly resolved has by then). */
const settled = () => new Promise((done) => setImmediate(done));

/** A queue whose own statements are recorded, and answered when `release` is called (or at once). */
function queueWithWrites(options: { delayMs?: number; held?: boolean } = {}) {
  const written: string[][] = [];
  const errors: unknown[] = [];
  const releases: (() => void)[] = [];
  /** A statement the database holds until released, in the order they arrived. */
  const held = () => new Promise<void>((done) => releases.push(done));
  const sut = new CompletionQueue(
    async ([ids]: CompletionParams) => {
      if (options.held) await held();
      written.push(ids);
    },
    options.delayMs ?? 5,
    (error) => errors.push(error),
  );
  const releaseFirst = () => releases.shift()?.();
  /** Statements the database holds now. */
  const holding = () => releases.length;
  return { sut, written, errors, held, releaseFirst, holding };
}

describe('the completions written after the answer', () => {
  it('hands what waits to the next statement, which writes none of it twice', async () => {
    const { sut, written } = queueWithWrites({ delayMs: 1000 });
    sut.add(completion('1'));
    sut.add(completion('2'));
    const carried: string[][] = [];
    await sut.carry(async ([ids]) => carried.push(ids));
    await sut.carry(async ([ids]) => carried.push(ids));
    expect(carried).toEqual([['1', '2'], []]);
    await sut.flush();
    expect(written).toEqual([]);
  });

  it('reports as missed only the carried completions whose rows the statement says it did not complete', async () => {
    const missed: string[][] = [];
    const sut = new CompletionQueue(
      async () => undefined,
      1000,
      () => undefined,
      (rows) => missed.push(rows.map((row) => row.id)),
    );
    sut.add(completion('1'));
    sut.add(completion('2'));
    // The statement's own rows say which of its completions it wrote: '2' was sealed.
    await sut.carry(
      async () => [{ completed: ['1'] }, { completed: null }],
      (rows) => rows[0].completed ?? [],
    );
    sut.add(completion('3'));
    // A statement whose rows say nothing of its completions (no reader given) reports none missed.
    await sut.carry(async () => [{ id: '7' }]);
    await sut.flush();
    expect(missed).toEqual([['2']]);
  });

  it('writes a completion no statement carried by a statement of its own after the delay', async () => {
    const { sut, written } = queueWithWrites({ delayMs: 5 });
    sut.add(completion('1'));
    expect(written).toEqual([]);
    await until(() => written.length > 0, 2_000);
    expect(written).toEqual([['1']]);
  });

  it('puts back what a failed statement carried, and writes it with the next', async () => {
    const { sut, written, errors } = queueWithWrites({ delayMs: 1000 });
    sut.add(completion('1'));
    const failure = new Error('connection lost');
    await expect(sut.carry(() => Promise.reject(failure))).rejects.toBe(failure);
    expect(errors).toEqual([failure]);
    sut.add(completion('2'));
    await sut.flush();
    expect(written).toEqual([['1', '2']]);
  });

  it('answers a flush only once everything waiting or on its way when it was asked is written', async () => {
    const { sut, written, held, releaseFirst, holding } = queueWithWrites({
      delayMs: 1,
      held: true,
    });
    sut.add(completion('1'));
    // Carried by another statement, which the database holds.
    const carrier = sut.carry(held);
    sut.add(completion('2'));
    await until(() => holding() === 2); // the timer's own statement has taken '2'
    let flushed = false;
    const flush = sut.flush().then(() => (flushed = true));
    releaseFirst();
    await carrier;
    await settled();
    expect(flushed).toBe(false); // '2' is still on its way
    releaseFirst();
    await flush;
    expect(written.flat().sort()).toEqual(['2']);
  });

  it('fails a flush whose statement failed, keeping its completions for the next attempt', async () => {
    let fail = true;
    const written: string[][] = [];
    const sut = new CompletionQueue(
      async ([ids]) => {
        if (fail) throw new Error('database down');
        written.push(ids);
      },
      1000,
      () => undefined,
    );
    sut.add(completion('1'));
    await expect(sut.flush()).rejects.toThrow('not written');
    fail = false;
    await sut.flush();
    expect(written).toEqual([['1']]);
  });
});
