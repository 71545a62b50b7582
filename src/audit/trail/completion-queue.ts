/** The outcome of a call written ahead, waiting to be written into its access-log row. */
export interface Completion {
  id: string;
  outcome: string;
  upstreamStatus: number | null;
  latencyMs: number;
}

/** The four array parameters (ids, outcomes, upstream statuses, latencies) of a completion statement. */
export type CompletionParams = [string[], string[], (number | null)[], number[]];

/** The most completions one statement carries. */
const MAX_CARRIED = 1024;
/** Beyond this many waiting (the database unreachable for long), the oldest are given up: still `sent`. */
const MAX_WAITING = 100_000;
/** After a failed write, the next attempt. */
const RETRY_MS = 1000;

/**
 * Completions of calls already answered, written after the answer rather than before it: carried by
 * the next statement the hot path sends anyway (the admission of another call), or written by a
 * statement of their own `delayMs` after the first one waited, whichever comes first. Under load
 * nearly every completion rides along with an admission, so a read costs one statement, and none of
 * its answer waits for the database after the bank answered. A crash in that window leaves the row
 * `sent`, as a crash during the bank call would: the log never says more than it knows. A write that
 * fails puts its completions back and is tried again; writing the same completion twice is harmless
 * (a row still `sent` is completed once).
 */
export class CompletionQueue {
  private waiting: Completion[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Statements on their way with completions: each settles to whether it failed. */
  private readonly inFlight = new Set<Promise<boolean>>();

  constructor(
    /** Writes completions; answers the ids of the rows it completed (when it reads them). */
    private readonly write: (params: CompletionParams) => Promise<string[] | void>,
    private readonly delayMs: number,
    private readonly onError: (error: unknown, waiting: number) => void,
    /** Completions a statement carried or wrote and whose rows it could not complete (sealed). */
    private readonly onMissed: (missed: Completion[]) => void = () => undefined,
  ) {}

  add(completion: Completion): void {
    this.waiting.push(completion);
    if (this.waiting.length > MAX_WAITING) {
      const dropped = this.waiting.splice(0, this.waiting.length - MAX_WAITING);
      this.onError(new Error(`${dropped.length} access-log completions given up`), MAX_WAITING);
    }
    if (this.waiting.length >= MAX_CARRIED) this.schedule(0);
    else this.schedule(this.delayMs);
  }

  /**
   * Hands the completions waiting to a statement about to be sent (`run` gets their parameters,
   * empty arrays when none wait); they are put back if it fails. With `completed` (the ids of the rows
   * the statement completed, read from its result), those it could not complete are reported.
   */
  carry<T>(
    run: (params: CompletionParams) => Promise<T>,
    completed?: (result: T) => string[],
  ): Promise<T> {
    const batch = this.take();
    const sent = run(paramsOf(batch));
    // Without `completed` the statement's result says nothing of the rows it completed: only its failure counts.
    if (batch.length > 0) this.track(sent, batch, completed);
    return sent;
  }

  /**
   * Writes every completion waiting now, and waits for those already on their way (carried, or
   * written by the timer); fails when any of them did (they wait again, for the next attempt).
   */
  async flush(): Promise<void> {
    // Everything this call covers is taken or in flight before the first await.
    while (this.waiting.length > 0) {
      const batch = this.take();
      this.track(this.write(paramsOf(batch)), batch, (ids) => ids);
    }
    const failures = (await Promise.all([...this.inFlight])).filter((failed) => failed);
    if (failures.length > 0) throw new Error('access-log completions not written; they wait again');
  }

  private take(): Completion[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting.splice(0, MAX_CARRIED);
    if (this.waiting.length > 0) this.schedule(0);
    return batch;
  }

  /** Tracks a statement carrying `batch`; `completed` reads from its result the ids of the rows it completed. */
  private track<T>(
    sent: Promise<T>,
    batch: Completion[],
    completed?: (result: T) => string[] | void,
  ): void {
    const settled = sent.then(
      (result) => {
        const ids = completed?.(result);
        if (ids) {
          const written = new Set(ids.map(String));
          const missed = batch.filter((completion) => !written.has(completion.id));
          if (missed.length > 0) this.onMissed(missed);
        }
        return false;
      },
      (error: unknown) => {
        this.waiting.unshift(...batch);
        this.onError(error, this.waiting.length);
        this.schedule(RETRY_MS);
        return true;
      },
    );
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
  }

  private schedule(delayMs: number): void {
    if (this.timer) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => undefined);
    }, delayMs);
    this.timer.unref();
  }
}

/** The parameters of a completion statement for these completions. */
export function paramsOf(batch: Completion[]): CompletionParams {
  return [
    batch.map((c) => c.id),
    batch.map((c) => c.outcome),
    batch.map((c) => c.upstreamStatus),
    batch.map((c) => c.latencyMs),
  ];
}
