import { createHash } from 'node:crypto';
import { type LedgerAccount, type LedgerTransaction } from './account-model.js';
import { addDays, isoDateTime, startOfUtcDay, utcDay } from './dates.js';
import { formatAmount, type Milli } from './money.js';
import { SANDBOX_USERS } from './test-users.js';
import { generateHistory } from './transaction-history.js';

/** psd2.yaml `Balance`. */
export interface BalanceDto {
  balanceAmount: { currency: string; amount: string };
  balanceType: 'expected' | 'closingBooked' | 'interimAvailable' | 'interimBooked';
  lastChangeDateTime?: string;
  referenceDate?: string;
}

export interface BookedDebit {
  amount: Milli;
  counterpartyName: string;
  counterpartyIban: string;
  remittanceInformationUnstructured: string;
  bankTransactionCode: string;
}

/** A payment debit the ledger booked after it was built: what a restart replays onto the generated history. */
export interface Booking {
  brandId: string;
  iban: string;
  transaction: LedgerTransaction;
}

/** The accounts of every brand with their balances and history; the only place that moves money. */
export class Ledger {
  private readonly accounts: LedgerAccount[];
  /** Payment debits booked since the history was generated, oldest first. */
  readonly bookings: Booking[] = [];

  constructor(anchor: Date) {
    this.accounts = SANDBOX_USERS.flatMap((user) =>
      user.accounts.map((seed) => {
        const digest = createHash('sha256').update(`${seed.brandId}:${seed.iban}`).digest('hex');
        const history = generateHistory(seed, digest.slice(24, 32), anchor);
        const pendingDebits = sum(history.pending.filter((entry) => entry.amount < 0n));
        const lastBooked = history.booked.at(-1)?.bookingDate;
        return {
          seed,
          ownerUsername: user.username,
          resourceId: `acc-${digest.slice(0, 24)}`,
          booked: history.booked,
          pending: history.pending,
          // The documented figure is what is available; the booked balance is what pending debits leave untouched.
          interimBooked: seed.available - pendingDebits,
          lastChange: lastBooked ?? startOfUtcDay(anchor),
        };
      }),
    );
  }

  atBrand(brandId: string): LedgerAccount[] {
    return this.accounts.filter((account) => account.seed.brandId === brandId);
  }

  byResourceId(brandId: string, resourceId: string): LedgerAccount | undefined {
    return this.atBrand(brandId).find((account) => account.resourceId === resourceId);
  }

  byIban(brandId: string, iban: string): LedgerAccount | undefined {
    return this.atBrand(brandId).find((account) => account.seed.iban === iban);
  }

  ownedBy(username: string, brandId: string): LedgerAccount[] {
    return this.atBrand(brandId).filter((account) => account.ownerUsername === username);
  }

  /** interimAvailable: the booked balance less pending debits (pending credits are not spendable yet). */
  available(account: LedgerAccount): Milli {
    return account.interimBooked + sum(account.pending.filter((entry) => entry.amount < 0n));
  }

  balances(account: LedgerAccount, now: Date): BalanceDto[] {
    const today = utcDay(now);
    const bookedToday = sum(
      account.booked.filter(
        (entry) => entry.bookingDate !== undefined && utcDay(entry.bookingDate) === today,
      ),
    );
    const money = (amount: Milli) => ({
      currency: account.seed.currency,
      amount: formatAmount(amount),
    });
    const lastChangeDateTime = isoDateTime(account.lastChange);
    return [
      {
        balanceAmount: money(account.interimBooked - bookedToday),
        balanceType: 'closingBooked',
        referenceDate: utcDay(addDays(now, -1)),
      },
      {
        balanceAmount: money(account.interimBooked),
        balanceType: 'interimBooked',
        lastChangeDateTime,
      },
      {
        balanceAmount: money(this.available(account)),
        balanceType: 'interimAvailable',
        lastChangeDateTime,
      },
      {
        balanceAmount: money(account.interimBooked + sum(account.pending)),
        balanceType: 'expected',
        lastChangeDateTime,
      },
    ];
  }

  /** Books an executed payment immediately (the sandbox settles at once). */
  bookDebit(account: LedgerAccount, debit: BookedDebit, now: Date): LedgerTransaction {
    const compactDay = utcDay(now).replaceAll('-', '');
    const sequence = `P${String(this.bookings.length + 1).padStart(3, '0')}`;
    const transaction: LedgerTransaction = {
      transactionId: `trx-${account.resourceId.slice(4, 12)}-${compactDay}-${sequence}`,
      entryReference: `${compactDay}-${sequence}`,
      amount: -debit.amount,
      currency: account.seed.currency,
      counterpartyName: debit.counterpartyName,
      counterpartyIban: debit.counterpartyIban,
      bookingDate: now,
      valueDate: startOfUtcDay(now),
      remittanceInformationUnstructured: debit.remittanceInformationUnstructured,
      bankTransactionCode: debit.bankTransactionCode,
      proprietaryBankTransactionCode: '0117',
    };
    this.apply(account, { brandId: account.seed.brandId, iban: account.seed.iban, transaction });
    return transaction;
  }

  /** Books again what an earlier run booked (bookings in their original order). */
  replay(booking: Booking): void {
    const account = this.byIban(booking.brandId, booking.iban);
    if (!account) throw new Error(`sandbox state names an unknown account ${booking.iban}`);
    this.apply(account, booking);
  }

  private apply(account: LedgerAccount, booking: Booking): void {
    account.booked.push(booking.transaction);
    account.interimBooked += booking.transaction.amount;
    account.lastChange = booking.transaction.bookingDate ?? account.lastChange;
    this.bookings.push(booking);
  }
}

function sum(entries: readonly LedgerTransaction[]): Milli {
  return entries.reduce((total, entry) => total + entry.amount, 0n);
}
