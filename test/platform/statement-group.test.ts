import { describe, expect, it } from '@jest/globals';
import { StatementGroup } from '#src/platform/database/statement-group.js';
import { requestContext } from '#src/platform/logging/request-context.js';
import type { Span, SpanAttributes } from '#src/platform/tracing/tracer.js';

/** A recorded request span that keeps what is done with its children. */
function recordingSpan(
  children: { name: string; attributes: SpanAttributes; ended: boolean; failed?: string }[],
): Span {
  const span: Span = {
    context: {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
    },
    recording: true,
    child(name, _kind, attributes = {}) {
      const kept = {
        name,
        attributes: { ...attributes },
        ended: false,
        failed: undefined as string | undefined,
      };
      children.push(kept);
      return {
        ...span,
        setAttributes: (more) => Object.assign(kept.attributes, more),
        fail: (errorType) => (kept.failed = errorType),
        end: () => (kept.ended = true),
      };
    },
    setAttributes: () => undefined,
    fail: () => undefined,
    end: () => undefined,
  };
  return span;
}

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

  it("is a span of the traced request it is made for, from the call to its result, with its group's size", async () => {
    const children: Parameters<typeof recordingSpan>[0] = [];
    const sut = doubling([]);
    const traced = { requestId: 'r', span: recordingSpan(children) };
    const results = await Promise.all([
      requestContext.run(traced, () => sut.run(1)),
      requestContext.run(traced, () => sut.run(2)),
      requestContext.run(traced, () => sut.run(3)),
      sut.run(4),
    ]);
    expect(results).toEqual([2, 4, 6, 8]);
    expect(children).toEqual([
      {
        name: 'db.statement_group doubling',
        attributes: {
          'db.system.name': 'postgresql',
          'portico.statement_group': 'doubling',
          'portico.statement_group.waited': false,
          'db.operation.batch.size': 1,
        },
        ended: true,
        failed: undefined,
      },
      ...[2, 3].map(() => ({
        name: 'db.statement_group doubling',
        attributes: expect.objectContaining({
          'portico.statement_group.waited': true,
          'db.operation.batch.size': 3,
        }),
        ended: true,
        failed: undefined,
      })),
    ]);
  });

  it('fails the span of a call whose statement failed; makes none for a request nothing records', async () => {
    const children: Parameters<typeof recordingSpan>[0] = [];
    const failing = new StatementGroup<number, number>(async () => {
      throw new TypeError('refused');
    }, 'failing');
    await expect(
      requestContext.run({ requestId: 'r', span: recordingSpan(children) }, () => failing.run(1)),
    ).rejects.toThrow('refused');
    expect(children).toEqual([expect.objectContaining({ ended: true, failed: 'TypeError' })]);

    const unrecorded = { ...recordingSpan(children), recording: false };
    await requestContext.run({ requestId: 'r', span: unrecorded }, () => doubling([]).run(1));
    expect(children).toHaveLength(1);
  });
});
