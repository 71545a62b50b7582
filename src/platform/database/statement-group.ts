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
 */
export class StatementGroup<I, R> {
  private pending: PendingCall<I, R>[] = [];
  private writing = false;

  /**
   * @param send one statement for the items, answering one result per item, in the items' order
   * @param max the most items one statement carries
   */
  constructor(
    private readonly send: (items: I[]) => Promise<R[]>,
    private readonly max = 256,
  ) {}

  run(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.writing) void this.drain();
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
}

type Answered<R> = { ok: true; results: R[] } | { ok: false; error: unknown };
