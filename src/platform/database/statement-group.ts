/**
 * A group write (group commit): calls that arrive while one statement is in flight are sent together
 * by the next one, so that N concurrent requests cost one round-trip instead of N. A call made while
 * nothing is in flight goes at once, so a lone request waits for nothing. Each caller gets its own
 * item's result; a failed statement fails every call it carried.
 */
export class StatementGroup<I, R> {
  private pending: { item: I; resolve: (result: R) => void; reject: (error: unknown) => void }[] =
    [];
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
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.max);
      try {
        const results = await this.send(batch.map((call) => call.item));
        if (results.length !== batch.length)
          throw new Error(`a group statement answered ${results.length} of ${batch.length} rows`);
        batch.forEach((call, index) => call.resolve(results[index]));
      } catch (error) {
        for (const call of batch) call.reject(error);
      }
    }
    this.writing = false;
  }
}
