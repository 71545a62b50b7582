import { requestContext } from '../logging/request-context.js';
import type { Span } from '../tracing/tracer.js';

/**
 * A group write (group commit): calls that arrive while one statement is in flight are sent together
 * by the next one, so that N concurrent requests cost one round-trip instead of N. A call made while
 * nothing is in flight goes at once, so a lone request waits for nothing. Each caller gets its own
 * item's result; a failed statement fails every call it carried.
 *
 * When a statement answers, the next one (the calls that arrived meanwhile) is sent before the
 * answered callers resume: they go on to their own work (a bank call each) in the same turn of the
 * event loop, and a statement sent after them would leave the database idle for all of it. With a
 * `send` that writes at once (PlainSql.queryOnOwnConnection), that is measured at 32 connections as
 * a shorter cycle per group statement (2.5 against 2.9 ms) and 6–8 % more reads a second.
 *
 * A call made for a traced request is a span of that request (`db.statement_group <name>`), from the call
 * to its result: the wait for the statement in flight included, and the size of the group that carried it.
 */
export class StatementGroup<I, R> {
  private pending: PendingCall<I, R>[] = [];
  private writing = false;

  /**
   * @param send one statement for the items, answering one result per item, in the items' order
   * @param name the group's name in traces (`access-log:begin`)
   * @param max the most items one statement carries
   */
  constructor(
    private readonly send: (items: I[]) => Promise<R[]>,
    readonly name: string,
    private readonly max = 256,
  ) {}

  run(item: I): Promise<R> {
    const span = this.spanOf();
    const result = new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject, span });
      if (!this.writing) void this.drain();
    });
    if (!span) return result;
    return result.then(
      (value) => (span.end(), value),
      (error: unknown) => {
        span.fail(error instanceof Error ? error.name : 'error');
        span.end();
        throw error;
      },
    );
  }

  /** This call's span, when the request it is made for is recorded (never otherwise: no cost). */
  private spanOf(): Span | undefined {
    const parent = requestContext.getStore()?.span;
    if (!parent?.recording) return undefined;
    return parent.child(`db.statement_group ${this.name}`, 'client', {
      'db.system.name': 'postgresql',
      'portico.statement_group': this.name,
      'portico.statement_group.waited': this.writing,
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    let batch = this.pending.splice(0, this.max);
    let answer = this.statementFor(batch);
    for (;;) {
      const answered = await answer;
      const next = this.pending.splice(0, this.max);
      // The next statement is on its way before the answered callers resume.
      if (next.length > 0) answer = this.statementFor(next);
      for (const call of batch)
        call.span?.setAttributes({ 'db.operation.batch.size': batch.length });
      if (answered.ok) batch.forEach((call, index) => call.resolve(answered.results[index]));
      else for (const call of batch) call.reject(answered.error);
      if (next.length === 0) break;
      batch = next;
    }
    this.writing = false;
  }

  /** Sends the statement for these calls; settles to its results, checked, or to its failure. */
  private async statementFor(batch: PendingCall<I, R>[]): Promise<Answered<R>> {
    try {
      const results = await this.send(batch.map((call) => call.item));
      if (results.length !== batch.length)
        throw new Error(`a group statement answered ${results.length} of ${batch.length} rows`);
      return { ok: true, results };
    } catch (error) {
      return { ok: false, error };
    }
  }
}

interface PendingCall<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
  span?: Span;
}

type Answered<R> = { ok: true; results: R[] } | { ok: false; error: unknown };
