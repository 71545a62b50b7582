import { describe, expect, it } from '@jest/globals';
import {
  accountIdOf,
  accountRead,
  authorise,
  bodyOf,
  expectError,
  IBAN,
  newAisConsent,
  newBank,
  newCofConsent,
  OTHER_TPP,
  PSU_IP,
  request,
  validAisConsent,
} from './fixtures.js';

const ALL_SERVICES = {
  accounts: [{ iban: IBAN.aliceHuf }],
  balances: [{ iban: IBAN.aliceHuf }],
  transactions: [{ iban: IBAN.aliceHuf }],
};
const PERIOD = { dateFrom: '2025-03-01', dateTo: '2025-03-15' };

describe('access rules on account reads', () => {
  it('answers a missing Consent-ID with 400 FORMAT_ERROR', () => {
    const { sut } = newBank();
    expectError(accountRead(sut, 'listAccounts', undefined), 400, 'FORMAT_ERROR', 'Consent-ID');
    expectError(
      accountRead(sut, 'getBalances', undefined, { accountId: 'acc-x' }),
      400,
      'FORMAT_ERROR',
      'Consent-ID',
    );
  });

  it("answers an unknown Consent-ID or another TPP's with 403 CONSENT_UNKNOWN", () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut);
    expectError(accountRead(sut, 'listAccounts', 'ais-unknown'), 403, 'CONSENT_UNKNOWN');
    expectError(
      accountRead(sut, 'listAccounts', consentId, {}, { tppId: OTHER_TPP }),
      403,
      'CONSENT_UNKNOWN',
    );
  });

  it('answers a consent that is not valid (received, rejected, terminated, revoked) with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const received = newAisConsent(sut).id;
    const rejected = newAisConsent(sut);
    authorise(sut, rejected.scaRedirect, { decision: 'deny' });
    const terminated = validAisConsent(sut);
    sut.handle(
      request('deleteConsent', { params: { brandId: 'danube-bank', consentId: terminated } }),
    );
    const revoked = validAisConsent(sut);
    sut.control.revokeConsentAsPsu(revoked);
    for (const consentId of [received, rejected.id, terminated, revoked]) {
      expectError(accountRead(sut, 'listAccounts', consentId), 401, 'CONSENT_INVALID');
    }
  });

  it('answers an expired consent with 401 CONSENT_EXPIRED', () => {
    const { sut, clock } = newBank();
    const consentId = validAisConsent(sut, { validUntil: '2025-03-16' });
    clock.set('2025-03-17T08:00:00Z');
    expectError(accountRead(sut, 'listAccounts', consentId), 401, 'CONSENT_EXPIRED');
  });

  it('answers a confirmation-of-funds consent used for account reads with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const cof = newCofConsent(sut, IBAN.aliceHuf);
    authorise(sut, cof.scaRedirect);
    expectError(accountRead(sut, 'listAccounts', cof.id), 401, 'CONSENT_INVALID');
  });

  it('lists only the consented accounts, with stable opaque resourceIds', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, {
      access: { accounts: [{ iban: IBAN.aliceHuf }], balances: [{ iban: IBAN.aliceEur }] },
    });
    const accounts = bodyOf(accountRead(sut, 'listAccounts', consentId)).accounts as {
      resourceId: string;
      iban: string;
      _links: Record<string, unknown>;
    }[];
    expect(accounts.map((account) => account.iban)).toEqual([IBAN.aliceHuf, IBAN.aliceEur]);
    for (const account of accounts) {
      expect(account.resourceId).toMatch(/^acc-[0-9a-f]{24}$/);
      expect(account.resourceId).not.toContain(account.iban.slice(4));
    }
    expect(Object.keys(accounts[0]._links)).toEqual([]);
    expect(Object.keys(accounts[1]._links)).toEqual(['balances']);
    const again = newBank().sut;
    expect(accountIdOf(again, validAisConsent(again), IBAN.aliceHuf)).toBe(accounts[0].resourceId);
  });

  it('answers an account outside the consent (or unknown) with 404 RESOURCE_UNKNOWN', () => {
    const { sut } = newBank();
    const other = validAisConsent(sut, { access: { accounts: [{ iban: IBAN.aliceEur }] } });
    const eurAccountId = accountIdOf(sut, other, IBAN.aliceEur);
    const consentId = validAisConsent(sut);
    expectError(
      accountRead(sut, 'getAccountDetails', consentId, { accountId: eurAccountId }),
      404,
      'RESOURCE_UNKNOWN',
      'accountId',
    );
    expectError(
      accountRead(sut, 'getBalances', consentId, { accountId: eurAccountId }),
      404,
      'RESOURCE_UNKNOWN',
    );
    expectError(
      accountRead(
        sut,
        'getTransactions',
        consentId,
        { accountId: eurAccountId },
        { query: PERIOD },
      ),
      404,
      'RESOURCE_UNKNOWN',
    );
    expectError(
      accountRead(sut, 'getAccountDetails', consentId, {
        accountId: 'acc-000000000000000000000000',
      }),
      404,
      'RESOURCE_UNKNOWN',
    );
  });

  it('answers balances of an account the consent lists without balances access with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, {
      access: { accounts: [{ iban: IBAN.aliceHuf }], transactions: [{ iban: IBAN.aliceHuf }] },
    });
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    expectError(accountRead(sut, 'getBalances', consentId, { accountId }), 401, 'CONSENT_INVALID');
    expect(
      accountRead(sut, 'getTransactions', consentId, { accountId }, { query: PERIOD }).status,
    ).toBe(200);
  });

  it('answers transactions of an account without transactions access with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, { access: { balances: [{ iban: IBAN.aliceHuf }] } });
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    expectError(
      accountRead(sut, 'getTransactions', consentId, { accountId }, { query: PERIOD }),
      401,
      'CONSENT_INVALID',
    );
    expect(accountRead(sut, 'getBalances', consentId, { accountId }).status).toBe(200);
  });

  it('covers account details for an IBAN listed only under balances or transactions', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, { access: { transactions: [{ iban: IBAN.aliceHuf }] } });
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    const response = accountRead(sut, 'getAccountDetails', consentId, { accountId });
    expect(response.status).toBe(200);
    expect(bodyOf(response).account).toMatchObject({
      resourceId: accountId,
      iban: IBAN.aliceHuf,
      currency: 'HUF',
      status: 'enabled',
      cashAccountType: 'CACC',
      details: expect.any(String),
    });
  });

  it('answers an unknown transactionId on a covered account with 404 RESOURCE_UNKNOWN', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, { access: ALL_SERVICES });
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    expectError(
      accountRead(sut, 'getTransactionDetails', consentId, {
        accountId,
        transactionId: 'trx-nope',
      }),
      404,
      'RESOURCE_UNKNOWN',
      'transactionId',
    );
  });
});

describe('unattended access frequency', () => {
  it('answers the fifth unattended read of the day across all paths with 429 ACCESS_EXCEEDED and Retry-After', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut);
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    expect(accountRead(sut, 'listAccounts', consentId).status).toBe(200);
    expect(accountRead(sut, 'getAccountDetails', consentId, { accountId }).status).toBe(200);
    expect(accountRead(sut, 'getBalances', consentId, { accountId }).status).toBe(200);
    expect(
      accountRead(sut, 'getTransactions', consentId, { accountId }, { query: PERIOD }).status,
    ).toBe(200);
    const refused = accountRead(sut, 'getBalances', consentId, { accountId });
    expectError(refused, 429, 'ACCESS_EXCEEDED');
    // 10:00 UTC: fourteen hours until the counter resets.
    expect(refused.headers).toEqual({ 'Retry-After': String(14 * 3600) });
  });

  it("uses the consent's frequencyPerDay when the TPP gave one", () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, { frequencyPerDay: 2 });
    expect(accountRead(sut, 'listAccounts', consentId).status).toBe(200);
    expect(accountRead(sut, 'listAccounts', consentId).status).toBe(200);
    expectError(accountRead(sut, 'listAccounts', consentId), 429, 'ACCESS_EXCEEDED');
  });

  it('never counts or limits reads with PSU-IP-Address', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, { frequencyPerDay: 1 });
    for (let read = 0; read < 10; read += 1) {
      expect(
        accountRead(
          sut,
          'listAccounts',
          consentId,
          {},
          { headers: { 'consent-id': consentId, 'psu-ip-address': PSU_IP } },
        ).status,
      ).toBe(200);
    }
    expect(accountRead(sut, 'listAccounts', consentId).status).toBe(200);
    expectError(accountRead(sut, 'listAccounts', consentId), 429, 'ACCESS_EXCEEDED');
    expect(
      accountRead(
        sut,
        'listAccounts',
        consentId,
        {},
        { headers: { 'consent-id': consentId, 'psu-ip-address': PSU_IP } },
      ).status,
    ).toBe(200);
  });

  it('counts only successful reads', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut, { frequencyPerDay: 1 });
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    expectError(
      accountRead(
        sut,
        'getTransactions',
        consentId,
        { accountId },
        { query: { dateFrom: '2025-03-10', dateTo: '2025-03-01' } },
      ),
      400,
      'PERIOD_INVALID',
    );
    expectError(
      accountRead(sut, 'getAccountDetails', consentId, { accountId: 'acc-unknown' }),
      404,
      'RESOURCE_UNKNOWN',
    );
    expect(accountRead(sut, 'getBalances', consentId, { accountId }).status).toBe(200);
  });

  it('counts per consent and starts afresh on the next UTC day', () => {
    const { sut, clock } = newBank();
    const first = validAisConsent(sut, { frequencyPerDay: 1 });
    const second = validAisConsent(sut, { frequencyPerDay: 1 });
    expect(accountRead(sut, 'listAccounts', first).status).toBe(200);
    expect(accountRead(sut, 'listAccounts', second).status).toBe(200);
    expectError(accountRead(sut, 'listAccounts', first), 429, 'ACCESS_EXCEEDED');
    clock.set('2025-03-16T00:00:01Z');
    expect(accountRead(sut, 'listAccounts', first).status).toBe(200);
  });
});
