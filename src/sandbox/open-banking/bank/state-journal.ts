import { type LedgerTransaction } from './account-model.js';
import { BankState } from './bank-state.js';
import { type Booking } from './ledger.js';
import { type TrackedMap } from './tracked-map.js';

/**
 * The bank's mutable state as rows of (kind, id, JSON): what the sandbox keeps in its state store
 * so that a restart finds the consents, payments, authorisations, SCA sessions, daily read counters
 * and booked payments it had. The account history itself is not stored: it is generated again from
 * the stored anchor day, which yields the same entries, and the bookings are replayed onto it.
 */

export type StateKind =
  'bank' | 'consent' | 'payment' | 'authorisation' | 'session' | 'unattended-read' | 'booking';

export interface StateRow {
  kind: StateKind;
  id: string;
  data: unknown;
}

export interface StateChanges {
  /** Remove every stored row first (control.reset). */
  reset?: true;
  upserts: StateRow[];
  deletes: { kind: StateKind; id: string }[];
}

/** Where the bank's rows are kept (the sandbox's schema in PostgreSQL or the embedded engine). */
export interface BankStateStore {
  /** Applies one operation's changes, in the order the operations happened. */
  write(changes: StateChanges): Promise<void>;
}

export const NO_CHANGES: StateChanges = { upserts: [], deletes: [] };

interface StoredBooking {
  sequence: number;
  brandId: string;
  iban: string;
  transaction: Omit<LedgerTransaction, 'amount' | 'bookingDate' | 'valueDate'> & {
    amount: string;
    bookingDate?: string;
    valueDate: string;
  };
}

function storedBooking(sequence: number, booking: Booking): StoredBooking {
  const { amount, bookingDate, valueDate, ...rest } = booking.transaction;
  return {
    sequence,
    brandId: booking.brandId,
    iban: booking.iban,
    transaction: {
      ...rest,
      amount: amount.toString(),
      ...(bookingDate ? { bookingDate: bookingDate.toISOString() } : {}),
      valueDate: valueDate.toISOString(),
    },
  };
}

function bookingOf(stored: StoredBooking): Booking {
  const { amount, bookingDate, valueDate, ...rest } = stored.transaction;
  return {
    brandId: stored.brandId,
    iban: stored.iban,
    transaction: {
      ...rest,
      amount: BigInt(amount),
      ...(bookingDate ? { bookingDate: new Date(bookingDate) } : {}),
      valueDate: new Date(valueDate),
    },
  };
}

type RecordMaps = readonly [StateKind, TrackedMap<string, unknown>][];

function recordMaps(state: BankState): RecordMaps {
  return [
    ['consent', state.consents],
    ['payment', state.payments],
    ['authorisation', state.authorisations],
    ['session', state.sessions],
    ['unattended-read', state.unattendedReads],
  ] as RecordMaps;
}

/**
 * Follows one BankState and says, after each operation, which rows changed: records whose JSON
 * differs from what was last handed out for storing, records deleted, and new bookings.
 */
export class StateJournal {
  private readonly written = new Map<string, string>();
  private bookingsWritten = 0;

  private constructor(private readonly state: BankState) {}

  /** A fresh state, replacing whatever was stored: its anchor row is the first change. */
  static fresh(state: BankState): { journal: StateJournal; changes: StateChanges } {
    const journal = new StateJournal(state);
    const anchor: StateRow = {
      kind: 'bank',
      id: 'anchor',
      data: { anchor: state.anchor.toISOString() },
    };
    return { journal, changes: { reset: true, upserts: [anchor], deletes: [] } };
  }

  /** The state the stored rows describe, or a fresh one anchored at `now` when there are none. */
  static restore(
    rows: readonly StateRow[],
    now: Date,
  ): { state: BankState; journal: StateJournal; changes: StateChanges } {
    const anchorRow = rows.find((row) => row.kind === 'bank' && row.id === 'anchor');
    if (!anchorRow) {
      const state = new BankState(now);
      return { state, ...StateJournal.fresh(state) };
    }
    const state = new BankState(new Date((anchorRow.data as { anchor: string }).anchor));
    const journal = new StateJournal(state);
    const bookings = rows
      .filter((row) => row.kind === 'booking')
      .map((row) => row.data as StoredBooking)
      .sort((a, b) => a.sequence - b.sequence);
    for (const booking of bookings) state.ledger.replay(bookingOf(booking));
    journal.bookingsWritten = bookings.length;
    const maps = new Map<StateKind, TrackedMap<string, unknown>>(recordMaps(state));
    for (const row of rows) {
      const map = maps.get(row.kind);
      if (!map) continue;
      map.set(row.id, row.data);
      journal.written.set(`${row.kind}|${row.id}`, JSON.stringify(row.data));
    }
    for (const [, map] of maps) map.takeTouched();
    return { state, journal, changes: NO_CHANGES };
  }

  /** Forgets what changed since the last call (nothing is stored). */
  skip(): void {
    for (const [, map] of recordMaps(this.state)) map.takeTouched();
    this.bookingsWritten = this.state.ledger.bookings.length;
  }

  /** The rows that changed since the last call. */
  takeChanges(): StateChanges {
    const changes: StateChanges = { upserts: [], deletes: [] };
    for (const [kind, map] of recordMaps(this.state)) {
      for (const id of map.takeTouched()) {
        const key = `${kind}|${id}`;
        const value = map.peek(id);
        if (value === undefined) {
          if (this.written.delete(key)) changes.deletes.push({ kind, id });
          continue;
        }
        const json = JSON.stringify(value);
        if (this.written.get(key) === json) continue;
        this.written.set(key, json);
        changes.upserts.push({ kind, id, data: JSON.parse(json) as unknown });
      }
    }
    const { bookings } = this.state.ledger;
    for (; this.bookingsWritten < bookings.length; this.bookingsWritten += 1) {
      const booking = bookings[this.bookingsWritten];
      changes.upserts.push({
        kind: 'booking',
        id: booking.transaction.transactionId,
        data: storedBooking(this.bookingsWritten + 1, booking),
      });
    }
    return changes;
  }
}
