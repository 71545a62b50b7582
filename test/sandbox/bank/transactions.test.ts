import { describe, expect, it } from '@jest/globals';
import { type SandboxBank } from '#src/sandbox/open-banking/bank/sandbox-bank.js';
import {
  accountIdOf,
  accountRead,
  bodyOf,
  expectError,
  IBAN,
  newBank,
  PSU_IP,
  validAisConsent,
} from './fixtures.js';

interface Entry {
  transactionId: string;
  bookingDate?: string;
  valueDate: string;
  transactionAmount: { currency: string; amount: string };
}

function reader(sut: SandboxBank) {
  const consentId = validAisConsent(sut);
  const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
  const headers = { 'consent-id': consentId, 'psu-ip-address': PSU_IP };
  return {
    list: (query: Record<string, string | undefined>) =>
      accountRead(sut, 'getTransactions', consentId, { accountId }, { query, headers }),
    entries(dateFrom: string, dateTo: string) {
      return bodyOf(this.list({ dateFrom, dateTo })).transactions as {
        booked: Entry[];
        pending: Entry[];
        _links: { account: { href: string } };
      };
    },
    details: (transactionId: string) =>
      accountRead(
        sut,
        'getTransactionDetails',
        consentId,
        { accountId, transactionId },
        { headers },
      ),
    accountId,
  };
}

describe('transactions', () => {
  it('includes both ends of the period: booked by booking day, pending by value day', () => {
    const { sut } = newBank();
    const read = reader(sut);
    const all = read.entries('2024-01-01', '2025-12-31');
    const day = all.booked[10].bookingDate!.slice(0, 10);
    const oneDay = read.entries(day, day);
    expect(oneDay.booked.length).toBeGreaterThan(0);
    expect(oneDay.booked.map((entry) => entry.transactionId)).toEqual(
      all.booked
        .filter((entry) => entry.bookingDate!.startsWith(day))
        .map((entry) => entry.transactionId),
    );
    expect(oneDay.pending).toEqual([]);
    const pendingDay = all.pending[0].valueDate.slice(0, 10);
    expect(
      read.entries(pendingDay, pendingDay).pending.map((entry) => entry.transactionId),
    ).toContain(all.pending[0].transactionId);
  });

  it('splits into adjacent periods without losing or repeating an entry', () => {
    const { sut } = newBank();
    const read = reader(sut);
    const all = read.entries('2024-12-01', '2025-03-15');
    const first = read.entries('2024-12-01', '2025-01-31');
    const second = read.entries('2025-02-01', '2025-03-15');
    const ids = (report: { booked: Entry[]; pending: Entry[] }) =>
      [...report.booked, ...report.pending].map((entry) => entry.transactionId);
    expect([...ids(first), ...ids(second)]).toEqual(ids(all));
  });

  it('gives booked, pending or both lists as bookingStatus asks, both when it is absent', () => {
    const { sut } = newBank();
    const read = reader(sut);
    const period = { dateFrom: '2024-12-01', dateTo: '2025-03-15' };
    const report = (bookingStatus?: string) =>
      bodyOf(read.list({ ...period, bookingStatus })).transactions as Record<string, unknown>;
    const both = report('both');
    expect((both.booked as Entry[]).length).toBeGreaterThan(0);
    expect((both.pending as Entry[]).length).toBeGreaterThan(0);
    expect(report()).toEqual(both);
    const booked = report('booked');
    expect(booked.booked).toEqual(both.booked);
    expect(booked).not.toHaveProperty('pending');
    const pending = report('pending');
    expect(pending.pending).toEqual(both.pending);
    expect(pending).not.toHaveProperty('booked');
  });

  it('refuses bookingStatus information and all with 400 PARAMETER_NOT_SUPPORTED, another value with FORMAT_ERROR', () => {
    const { sut } = newBank();
    const read = reader(sut);
    const period = { dateFrom: '2025-03-01', dateTo: '2025-03-15' };
    for (const bookingStatus of ['information', 'all'])
      expectError(
        read.list({ ...period, bookingStatus }),
        400,
        'PARAMETER_NOT_SUPPORTED',
        'bookingStatus',
      );
    expectError(
      read.list({ ...period, bookingStatus: 'settled' }),
      400,
      'FORMAT_ERROR',
      'bookingStatus',
    );
  });

  it('answers dateFrom after dateTo with 400 PERIOD_INVALID', () => {
    const { sut } = newBank();
    expectError(
      reader(sut).list({ dateFrom: '2025-03-02', dateTo: '2025-03-01' }),
      400,
      'PERIOD_INVALID',
    );
  });

  it('answers a missing dateFrom or dateTo with 400 FORMAT_ERROR', () => {
    const { sut } = newBank();
    const read = reader(sut);
    expectError(read.list({ dateTo: '2025-03-01' }), 400, 'FORMAT_ERROR', 'dateFrom');
    expectError(read.list({ dateFrom: '2025-03-01' }), 400, 'FORMAT_ERROR', 'dateTo');
  });

  it('links the report to its account and returns the IBAN', () => {
    const { sut } = newBank();
    const read = reader(sut);
    const body = bodyOf(read.list({ dateFrom: '2025-03-01', dateTo: '2025-03-15' }));
    expect(body.account).toEqual({ iban: IBAN.aliceHuf });
    expect((body.transactions as { _links: unknown })._links).toEqual({
      account: { href: `/danube-bank/bg/v1/accounts/${read.accountId}` },
    });
  });

  it('returns one transaction by id, with its proprietary code', () => {
    const { sut } = newBank();
    const read = reader(sut);
    const listed = read.entries('2025-03-01', '2025-03-15').booked[0];
    const response = read.details(listed.transactionId);
    expect(response.status).toBe(200);
    expect(bodyOf(response).transactionsDetails).toEqual({
      ...listed,
      proprietaryBankTransactionCode: expect.any(String),
    });
  });
});
