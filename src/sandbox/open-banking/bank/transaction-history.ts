import { type LedgerTransaction } from './account-model.js';
import { COUNTERPARTIES, type Counterparty } from './counterparties.js';
import { addDays, startOfUtcDay } from './dates.js';
import { units, type Milli } from './money.js';
import { SeededRandom } from './seeded-random.js';
import { type SandboxAccountSeed } from './test-users.js';

/** Roughly a quarter of history, as PSD2 lets a TPP read 90 days without fresh SCA. */
export const HISTORY_DAYS = 90;
/** Card authorisations of the last two days are not booked yet. */
const PENDING_DAYS = 2;
/** Rough purchasing-power factor so that HUF and PLN amounts look like EUR ones in local money. */
const CURRENCY_SCALE: Readonly<Record<string, number>> = { EUR: 1, PLN: 4, HUF: 390 };

export interface GeneratedHistory {
  booked: LedgerTransaction[];
  pending: LedgerTransaction[];
}

/**
 * The account's history over the HISTORY_DAYS days up to `anchor` (inclusive), derived only
 * from the account's IBAN and the anchor day, so that the same day always yields the same data.
 */
export function generateHistory(
  seed: SandboxAccountSeed,
  transactionKey: string,
  anchor: Date,
): GeneratedHistory {
  const random = new SeededRandom(seed.iban);
  const parties = COUNTERPARTIES[seed.currency];
  const history: GeneratedHistory = { booked: [], pending: [] };
  const today = startOfUtcDay(anchor);
  for (let daysAgo = HISTORY_DAYS; daysAgo >= 0; daysAgo -= 1) {
    const day = addDays(today, -daysAgo);
    const entries: EntryWithoutDates[] = [];
    if (seed.cashAccountType === 'CACC' && day.getUTCDate() === 10) {
      entries.push(
        credit(parties.employer, scaled(random, seed.currency, 1400, 2600), seed.currency, random),
      );
    }
    if (seed.cashAccountType === 'SVGS' && day.getUTCDate() === 1) {
      entries.push(
        credit(
          parties.employer,
          scaled(random, seed.currency, 1, 9),
          seed.currency,
          random,
          'Interest',
          'LDAS-CSLN-INTR',
        ),
      );
    }
    const debitsToday =
      seed.cashAccountType === 'SVGS' ? (random.next() < 0.05 ? 1 : 0) : random.between(0, 2);
    for (let index = 0; index < debitsToday; index += 1) {
      entries.push(
        debit(
          random.pick(parties.merchants),
          scaled(random, seed.currency, 3, 180),
          seed.currency,
          random,
        ),
      );
    }
    const isPending = daysAgo < PENDING_DAYS;
    entries.forEach((entry, index) => {
      const sequence = String(index + 1).padStart(4, '0');
      const compactDay = day.toISOString().slice(0, 10).replaceAll('-', '');
      const booking = new Date(day.getTime() + random.between(7 * 3600, 20 * 3600) * 1000);
      const transaction: LedgerTransaction = {
        ...entry,
        transactionId: `trx-${transactionKey}-${compactDay}-${sequence}`,
        entryReference: `${compactDay}-${sequence}`,
        valueDate: day,
        ...(isPending ? {} : { bookingDate: booking }),
      };
      (isPending ? history.pending : history.booked).push(transaction);
    });
  }
  return history;
}

function scaled(random: SeededRandom, currency: string, minEur: number, maxEur: number): Milli {
  const scale = CURRENCY_SCALE[currency] ?? 1;
  const whole = random.between(minEur * scale, maxEur * scale);
  // Forint prices are whole numbers in practice; others carry cents.
  return currency === 'HUF' ? units(whole) : units(whole, random.between(0, 99));
}

type EntryWithoutDates = Omit<
  LedgerTransaction,
  'transactionId' | 'entryReference' | 'bookingDate' | 'valueDate'
>;

function credit(
  from: Counterparty,
  amount: Milli,
  currency: string,
  random: SeededRandom,
  remittance?: string,
  code = 'PMNT-RCDT-ESCT',
): EntryWithoutDates {
  return {
    amount,
    currency,
    counterpartyName: from.name,
    counterpartyIban: from.iban,
    remittanceInformationUnstructured: remittance ?? random.pick(from.remittances),
    bankTransactionCode: code,
    proprietaryBankTransactionCode: '0101',
  };
}

function debit(
  to: Counterparty,
  amount: Milli,
  currency: string,
  random: SeededRandom,
): EntryWithoutDates {
  return {
    amount: -amount,
    currency,
    counterpartyName: to.name,
    counterpartyIban: to.iban,
    remittanceInformationUnstructured: random.pick(to.remittances),
    bankTransactionCode: 'PMNT-ICDT-DMCT',
    proprietaryBankTransactionCode: '0117',
  };
}
