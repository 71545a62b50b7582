import type { StoredRows } from '../persistence/sandbox-state-store.js';
import type { PosMerchant, PosTransaction, Terminal } from './pos-state.js';

export type PosStateKind = 'merchant' | 'terminal' | 'transaction';

export interface PosStateRow {
  kind: PosStateKind;
  id: string;
  data: unknown;
}

/** Where the POS side's rows are kept (table `pos_state` of the sandbox's schema). */
export interface PosStateStore {
  write(changes: StoredRows<PosStateKind>): Promise<void>;
}

/**
 * The POS side's changes, written to its store in the order they were made (one write per tick), so
 * that a sandbox restarted on the same database keeps its merchants' POS keys, terminals and results.
 */
export class PosJournal {
  private changed = new Map<string, PosStateRow>();
  private deleted = new Map<string, { kind: PosStateKind; id: string }>();
  private scheduled = false;
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(private readonly store?: PosStateStore) {}

  note(kind: PosStateKind, id: string, data: PosMerchant | Terminal | PosTransaction): void {
    if (!this.store) return;
    this.deleted.delete(`${kind}|${id}`);
    this.changed.set(`${kind}|${id}`, { kind, id, data: JSON.parse(JSON.stringify(data)) });
    this.schedule();
  }

  /** A row gone (a transaction the provider lost: the control port's). */
  forget(kind: PosStateKind, id: string): void {
    if (!this.store) return;
    this.changed.delete(`${kind}|${id}`);
    this.deleted.set(`${kind}|${id}`, { kind, id });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Settles when every change so far is stored; rejects when the latest write failed. */
  persisted(): Promise<void> {
    if (this.scheduled) this.flush();
    return this.lastWrite;
  }

  private flush(): void {
    this.scheduled = false;
    const upserts = [...this.changed.values()];
    const deletes = [...this.deleted.values()];
    this.changed = new Map();
    this.deleted = new Map();
    const store = this.store;
    if (!store || upserts.length + deletes.length === 0) return;
    this.lastWrite = this.lastWrite
      .catch(() => undefined)
      .then(() => store.write({ upserts, deletes }));
    this.lastWrite.catch(() => undefined);
  }
}
