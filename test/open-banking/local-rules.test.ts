import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PorticoClient, Problem } from '#src/client/portico-client.js';
import { approvedConsent } from '../support/consent-flow.js';
import { consentRequest, inDays } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { bankCallCount, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('local enforcement: refused by Portico before the bank is called', () => {
  let gateway: TestGateway;
  let key: string;
  let api: PorticoClient;
  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await gateway.newTenantWithKey('app')).key;
    api = porticoClient(gateway, key);
  });
  afterAll(() => gateway.close());

  const bankCalls = () => bankCallCount(gateway);
  /** Runs the call and asserts the bank saw nothing. */
  const refusedLocally = async <T>(call: () => Promise<T>): Promise<T> => {
    const before = bankCalls();
    const answer = await call();
    expect(bankCalls()).toBe(before);
    return answer;
  };
  const under = (consentId: string, psuIpAddress?: string) => ({
    header: {
      'Consent-ID': consentId,
      ...(psuIpAddress ? { 'PSU-IP-Address': psuIpAddress } : {}),
    },
  });

  it("refuses an unknown consent and another tenant's consent with 404, as if it did not exist", async () => {
    const unknown = await refusedLocally(() =>
      api.GET('/v1/accounts', { params: under('00000000-0000-4000-8000-000000000000') }),
    );
    expect([unknown.response.status, unknown.error?.code]).toEqual([404, 'CONSENT_UNKNOWN']);

    const { consentId, accountId } = await approvedConsent(gateway, key);
    const other = porticoClient(gateway, (await gateway.newTenantWithKey('app')).key);
    const reads: (() => Promise<{ response: Response; error?: Problem }>)[] = [
      () => other.GET('/v1/accounts', { params: under(consentId) }),
      () =>
        other.GET('/v1/accounts/{accountId}/balances', {
          params: { ...under(consentId), path: { accountId } },
        }),
    ];
    for (const read of reads) {
      const { response, error } = await refusedLocally(read);
      expect([response.status, error?.code]).toEqual([404, 'CONSENT_UNKNOWN']);
    }
    const path = { params: { path: { consentId } } };
    expect(
      (await refusedLocally(() => other.GET('/v1/consents/{consentId}', path))).response.status,
    ).toBe(404);
    expect(
      (await refusedLocally(() => other.DELETE('/v1/consents/{consentId}', path))).response.status,
    ).toBe(404);
  });

  it('refuses a consent the user has not approved yet with 401 CONSENT_INVALID', async () => {
    const created = await api.POST('/v1/consents', { body: consentRequest() });
    const { response, error } = await refusedLocally(() =>
      api.GET('/v1/accounts', { params: under(created.data!.consentId) }),
    );
    expect([response.status, error?.code]).toEqual([401, 'CONSENT_INVALID']);
  });

  it('refuses a consent past validUntil with 401 CONSENT_EXPIRED and records the expiry', async () => {
    const { consentId } = await approvedConsent(gateway, key);
    await gateway.dataSource.query(`UPDATE consents SET valid_until = $2 WHERE id = $1`, [
      consentId,
      inDays(-1),
    ]);
    const { response, error } = await refusedLocally(() =>
      api.GET('/v1/accounts', { params: under(consentId, '192.0.2.1') }),
    );
    expect([response.status, error?.code]).toEqual([401, 'CONSENT_EXPIRED']);
    const [change] = await gateway.dataSource.query(
      `SELECT from_status, to_status, cause FROM status_changes WHERE subject_id = $1 ORDER BY id DESC LIMIT 1`,
      [consentId],
    );
    expect(change).toEqual({
      from_status: 'valid',
      to_status: 'expired',
      cause: 'valid-until-passed',
    });
  });

  it('refuses an account outside the consent with 403 RESOURCE_UNKNOWN', async () => {
    const { consentId } = await approvedConsent(gateway, key);
    const { response, error } = await refusedLocally(() =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: { ...under(consentId, '192.0.2.1'), path: { accountId: 'some-other-account' } },
      }),
    );
    expect([response.status, error?.code]).toEqual([403, 'RESOURCE_UNKNOWN']);
  });

  it('gives the access-log row written ahead its refusal when the request is refused after admission (a query the pipe refuses, dates the handler refuses)', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const transactions = (dateFrom: string, dateTo: string) =>
      refusedLocally(() =>
        api.GET('/v1/accounts/{accountId}/transactions', {
          params: {
            ...under(consentId, '192.0.2.1'),
            path: { accountId },
            query: { dateFrom, dateTo },
          },
        }),
      );
    const malformed = await transactions('yesterday', '2026-11-20');
    expect([malformed.response.status, malformed.error?.errors?.[0]?.field]).toEqual([
      400,
      'dateFrom',
    ]);
    const backwards = await transactions('2026-11-20', '2026-11-01');
    expect(backwards.response.status).toBe(400);
    const rows: { operation: string; outcome: string }[] = await gateway.dataSource.query(
      `SELECT operation, outcome FROM access_log WHERE consent_id = $1 ORDER BY id`,
      [consentId],
    );
    expect(rows.filter((row) => row.operation === 'getAccountTransactions')).toEqual([
      { operation: 'getAccountTransactions', outcome: expect.stringMatching(/^refused:/) },
      { operation: 'getAccountTransactions', outcome: expect.stringMatching(/^refused:/) },
    ]);
  });

  it('sees a change of the consent made elsewhere (another replica, the database) at the next read, though it read the consent before', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const balances = () =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: { ...under(consentId, '192.0.2.1'), path: { accountId } },
      });
    expect((await balances()).response.status).toBe(200);
    expect((await balances()).response.status).toBe(200);
    await gateway.dataSource.query(`UPDATE consents SET status = 'revokedByPsu' WHERE id = $1`, [
      consentId,
    ]);
    const revoked = await refusedLocally(balances);
    expect([revoked.response.status, revoked.error?.code]).toEqual([401, 'CONSENT_INVALID']);
    await gateway.dataSource.query(`UPDATE consents SET status = 'valid' WHERE id = $1`, [
      consentId,
    ]);
    expect((await balances()).response.status).toBe(200);
    // The account taken out of the consent's grant: refused for that account from the next read.
    await gateway.dataSource.query(
      `UPDATE consents SET granted_access = jsonb_set(granted_access, '{balances}', '[]') WHERE id = $1`,
      [consentId],
    );
    const ungranted = await refusedLocally(balances);
    expect([ungranted.response.status, ungranted.error?.code]).toEqual([401, 'CONSENT_INVALID']);
  });

  it('counts unattended reads against frequencyPerDay, says what is left, and refuses the one too many with 429', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, key, { frequencyPerDay: 2 });
    const first = await api.GET('/v1/accounts', { params: under(consentId) });
    expect(first.response.status).toBe(200);
    expect([
      first.response.headers.get('x-access-budget-limit'),
      first.response.headers.get('x-access-budget-remaining'),
    ]).toEqual(['2', '1']);
    const attended = await api.GET('/v1/accounts/{accountId}/balances', {
      params: { ...under(consentId, '2001:db8::7'), path: { accountId } },
    });
    expect(attended.response.headers.get('x-access-budget-remaining')).toBe('1');
    expect(
      (
        await api.GET('/v1/accounts/{accountId}', {
          params: { ...under(consentId), path: { accountId } },
        })
      ).response.headers.get('x-access-budget-remaining'),
    ).toBe('0');
    const refused = await refusedLocally(() =>
      api.GET('/v1/accounts', { params: under(consentId) }),
    );
    expect([refused.response.status, refused.error?.code]).toEqual([429, 'ACCESS_EXCEEDED']);
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
    // With the user present, reads go on.
    expect(
      (await api.GET('/v1/accounts', { params: under(consentId, '192.0.2.1') })).response.status,
    ).toBe(200);
  });

  it('shares the daily budget between replicas', async () => {
    const replica = await startTestGateway();
    try {
      const { consentId } = await approvedConsent(gateway, key, { frequencyPerDay: 1 });
      // The second replica talks to its own sandbox, but the consent store and counters are shared.
      const other = porticoClient(replica, key);
      expect((await api.GET('/v1/accounts', { params: under(consentId) })).response.status).toBe(
        200,
      );
      const refused = await other.GET('/v1/accounts', { params: under(consentId) });
      expect([refused.response.status, refused.error?.code]).toEqual([429, 'ACCESS_EXCEEDED']);
    } finally {
      await replica.close();
    }
  });

  it('refuses a bad request before the bank: product rules, past validUntil, missing headers', async () => {
    const sepaWithoutAgent = await refusedLocally(() =>
      api.POST('/v1/payments', {
        body: {
          brandId: 'danube-bank',
          paymentProduct: 'sepa-credit-transfers',
          payment: {
            instructedAmount: { currency: 'EUR', amount: '10.00' },
            creditorName: 'ACME',
            creditorAccount: { iban: 'DE89370400440532013000' },
            creditorType: 'COMPANY',
            creditorAddress: { country: 'DE' },
            remittanceInformationUnstructured: 'x',
          },
          redirectUri: 'https://app.example/r',
        },
      }),
    );
    expect(sepaWithoutAgent.response.status).toBe(400);
    expect(sepaWithoutAgent.error?.errors?.map((e) => e.field)).toContain('payment.creditorAgent');

    const domesticInEur = await refusedLocally(() =>
      api.POST('/v1/payments', {
        body: {
          brandId: 'danube-bank',
          paymentProduct: 'domestic-credit-transfers',
          payment: {
            instructedAmount: { currency: 'EUR', amount: '10.00' },
            creditorName: 'ACME',
            creditorAccount: { iban: 'HU42117730161111101800000000' },
            creditorType: 'COMPANY',
            remittanceInformationUnstructured: 'x',
          },
          redirectUri: 'https://app.example/r',
        },
      }),
    );
    expect(domesticInEur.error?.errors?.map((e) => e.field)).toContain(
      'payment.instructedAmount.currency',
    );

    const past = await refusedLocally(() =>
      api.POST('/v1/consents', { body: consentRequest({ validUntil: inDays(-2) }) }),
    );
    expect(past.error?.errors).toEqual([
      { field: 'validUntil', reason: 'validUntil must not be in the past' },
    ]);

    const badAccess = await refusedLocally(() =>
      api.POST('/v1/consents', {
        body: consentRequest({
          access: { accounts: [{ iban: 'not an iban' }] },
          redirectUri: 'ftp://x',
        }),
      }),
    );
    expect(badAccess.error?.errors?.map((e) => e.field)).toEqual(
      expect.arrayContaining(['access.accounts[0].iban', 'redirectUri']),
    );

    const noConsentHeader = await refusedLocally(() =>
      // Deliberately without the Consent-ID header the spec (and so the client's types) require.
      api.GET('/v1/accounts', { params: { header: {} as { 'Consent-ID': string } } }),
    );
    expect(noConsentHeader.error?.errors).toEqual([
      {
        field: 'header:Consent-ID',
        reason: 'Consent-ID is required: the consentId Portico returned',
      },
    ]);
  });
});
