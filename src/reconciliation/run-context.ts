import type { ReconciliationClass } from './reconciliation.entities.js';
import type { FoundDrift, RunWindow } from './reconciliation.repository.js';

/** What a capability's reconciler is given for one run. */
export interface RunContext {
  readonly window: RunWindow;
  /** One provider call: at the tenant's request rate, with a deadline of its own, counted in the run's requests. */
  call<T>(send: () => Promise<T>): Promise<T>;
  /** After each page of a list, each read by id: the run's lease renewed (a run whose lease was taken over stops here). */
  pageDone(): Promise<void>;
  /** A resource settled or found in step. */
  count(outcome: ReconciliationClass | 'in-doubt'): void;
  /** A drift, recorded once (with its event) and counted. */
  flag(drift: FoundDrift): Promise<void>;
}
