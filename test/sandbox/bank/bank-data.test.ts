import { describe, expect, it } from '@jest/globals';
import { COUNTERPARTY_IBANS } from '#src/sandbox/open-banking/bank/counterparties.js';
import { isValidIban } from '#src/sandbox/open-banking/bank/iban.js';
import { TEST_USERS } from '#src/sandbox/open-banking/bank/test-users.js';
import {
  accountIdOf,
  accountRead,
  bodyOf,
  IBAN,
  newBank,
  PSU_IP,
  request,
  SCA_BASE_URL,
  TestClock,
  validAisConsent,
} from './fixtures.js';

type Transaction = {
  transactionId: string;
  transactionAmount: { amount: string };
  bookingDate?: string;
  valueDate: string;
  creditorName?: string;
  debtorName?: string;
};

function transactionsOf(clock: TestClock, dateFrom: string, dateTo: string) {
  const { sut } = newBank(clock);
  const consentId = validAisConsent(sut);
  const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
  const response = accountRead(
    sut,
    'getTransactions',
    consentId,
    { accountId },
    { query: { dateFrom, dateTo }, headers: { 'consent-id': consentId, 'psu-ip-address': PSU_IP } },
  );
  return bodyOf(response).transactions as { booked: Transaction[]; pending: Transaction[] };
}

describe('sandbox bank data', () => {
  it('lists three brands whose authorizationEndpoint lies under the SCA base URL', () => {
    const { sut } = newBank();
    const response = sut.handle(request('listBrands'));
    expect(response.status).toBe(200);
    const brands = bodyOf(response).brands as {
      brandId: string;
      brandName: string;
      authorizationEndpoint: string;
    }[];
    expect(brands.map((brand) => brand.brandId)).toEqual([
      'danube-bank',
      'vistula-bank',
      'aegean-bank',
    ]);
    expect(new Set(brands.map((brand) => brand.brandName)).size).toBe(3);
    for (const brand of brands)
      expect(brand.authorizationEndpoint).toBe(`${SCA_BASE_URL}/sca/${brand.brandId}`);
  });

  it('documents test users with valid IBANs in EUR, HUF and PLN, enabled and blocked', () => {
    const accounts = TEST_USERS.flatMap((user) => user.accounts);
    expect(TEST_USERS.map((user) => `${user.username}/${user.password}`)).toEqual([
      'alice/alice-pass',
      'bob/bob-pass',
      'carol/carol-pass',
    ]);
    for (const account of accounts) expect(isValidIban(account.iban)).toBe(true);
    expect(new Set(accounts.map((account) => account.currency))).toEqual(
      new Set(['EUR', 'HUF', 'PLN']),
    );
    expect(new Set(accounts.map((account) => account.status))).toEqual(
      new Set(['enabled', 'blocked']),
    );
    expect(new Set(accounts.map((account) => account.iban)).size).toBe(accounts.length);
    for (const user of TEST_USERS) expect(user.accounts.length).toBeGreaterThanOrEqual(3);
  });

  it('uses counterparty IBANs with valid check digits', () => {
    for (const iban of COUNTERPARTY_IBANS) expect(isValidIban(iban)).toBe(true);
    expect(isValidIban('HU75118000170000001234567818')).toBe(false);
  });

  it('generates the same history for the same day on every start', () => {
    const first = transactionsOf(new TestClock(), '2024-01-01', '2025-12-31');
    const second = transactionsOf(new TestClock(), '2024-01-01', '2025-12-31');
    expect(second).toEqual(first);
  });

  it('spans about 90 days with booked and pending entries, credits and debits', () => {
    const { booked, pending } = transactionsOf(new TestClock(), '2024-01-01', '2025-12-31');
    expect(booked.length).toBeGreaterThan(40);
    expect(pending.length).toBeGreaterThan(0);
    const bookingDays = booked.map((entry) => entry.bookingDate!.slice(0, 10)).sort();
    expect(bookingDays[0] >= '2024-12-14').toBe(true);
    expect(bookingDays[0] <= '2024-12-20').toBe(true);
    expect(bookingDays.at(-1)! < '2025-03-15').toBe(true);
    expect(
      booked.some((entry) => entry.transactionAmount.amount.startsWith('-') && entry.creditorName),
    ).toBe(true);
    expect(
      booked.some((entry) => !entry.transactionAmount.amount.startsWith('-') && entry.debtorName),
    ).toBe(true);
    for (const entry of pending) expect(entry.bookingDate).toBeUndefined();
    expect(new Set([...booked, ...pending].map((entry) => entry.transactionId)).size).toBe(
      booked.length + pending.length,
    );
  });

  it('reports all four balance types, interimAvailable being the documented balance', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut);
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    const response = accountRead(sut, 'getBalances', consentId, { accountId });
    expect(response.status).toBe(200);
    const balances = bodyOf(response).balances as {
      balanceType: string;
      balanceAmount: { currency: string; amount: string };
      referenceDate?: string;
    }[];
    expect(balances.map((balance) => balance.balanceType).sort()).toEqual([
      'closingBooked',
      'expected',
      'interimAvailable',
      'interimBooked',
    ]);
    expect(
      balances.find((balance) => balance.balanceType === 'interimAvailable')!.balanceAmount,
    ).toEqual({ currency: 'HUF', amount: '1520340.50' });
    expect(balances.find((balance) => balance.balanceType === 'closingBooked')!.referenceDate).toBe(
      '2025-03-14',
    );
    for (const balance of balances)
      expect(balance.balanceAmount.amount).toMatch(/^-?[0-9]{1,14}(\.[0-9]{1,3})?$/);
  });
});
