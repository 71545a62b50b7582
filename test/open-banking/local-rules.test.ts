import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { consentRequest, facade, inDays, type FacadeResponse } from '../support/facade.js';
import { bankCallCount, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('local enforcement: refused by Portico before the bank is called', () => {
  let gateway: TestGateway;
  let key: string;
  let api: ReturnType<typeof facade>;
  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await gateway.newTenantWithKey('app')).key;
    api = facade(gateway, key);
  });
  afterAll(() => gateway.close());

  const bankCalls = () => bankCallCount(gateway);
  /** Runs the call and asserts the bank saw nothing. */
  const refusedLocally = async (call: () => Promise<FacadeResponse>) => {
    const before = bankCalls();
    const response = await call();
    expect(bankCalls()).toBe(before);
    return response;
  };

  it("refuses an unknown consent and another tenant's consent with 404, as if it did not exist", async () => {
    const unknown = await refusedLocally(() =>
      api.get('/v1/accounts', { 'consent-id': '00000000-0000-4000-8000-000000000000' }),
    );
    expect([unknown.status, unknown.body.code]).toEqual([404, 'CONSENT_UNKNOWN']);

    const { consentId, accountId } = await approvedConsent(gateway, key);
    const other = facade(gateway, (await gateway.newTenantWithKey('app')).key);
    for (const url of ['/v1/accounts', `/v1/accounts/${accountId}/balances`]) {
      const response = await refusedLocally(() => other.get(url, { 'consent-id': consentId }));
      expect([response.status, response.body.code]).toEqual([404, 'CONSENT_UNKNOWN']);
    }
    expect((await refusedLocally(() => other.get(`/v1/consents/${consentId}`))).status).toBe(404);
    expect((await refusedLocally(() => other.delete(`/v1/consents/${consentId}`))).status).toBe(
      404,
    );
  });

  it('refuses a consent the user has not approved yet with 401 CONSENT_INVALID', async () => {
    const created = await api.post<{ consentId: string }>('/v1/consents', consentRequest());
    const response = await refusedLocally(() =>
      api.get('/v1/accounts', { 'consent-id': created.body.consentId }),
    );
    expect([response.status, response.body.code]).toEqual([401, 'CONSENT_INVALID']);
  });

  it('refuses a consent past validUntil with 401 CONSENT_EXPIRED and records the expiry', async () => {
    const { consentId } = await approvedConsent(gateway, key);
    await gateway.dataSource.query(`UPDATE consents SET valid_until = $2 WHERE id = $1`, [
      consentId,
      inDays(-1),
    ]);
    const response = await refusedLocally(() =>
      api.get('/v1/accounts', { 'consent-id': consentId, 'psu-ip-address': '192.0.2.1' }),
    );
    expect([response.status, response.body.code]).toEqual([401, 'CONSENT_EXPIRED']);
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
    const response = await refusedLocally(() =>
      api.get('/v1/accounts/some-other-account/balances', {
        'consent-id': consentId,
        'psu-ip-address': '192.0.2.1',
      }),
    );
    expect([response.status, response.body.code]).toEqual([403, 'RESOURCE_UNKNOWN']);
  });

  it('counts unattended reads against frequencyPerDay, says what is left, and refuses the one too many with 429', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, key, { frequencyPerDay: 2 });
    const first = await api.get('/v1/accounts', { 'consent-id': consentId });
    expect(first.status).toBe(200);
    expect([
      first.headers['x-access-budget-limit'],
      first.headers['x-access-budget-remaining'],
    ]).toEqual(['2', '1']);
    const attended = await api.get(`/v1/accounts/${accountId}/balances`, {
      'consent-id': consentId,
      'psu-ip-address': '2001:db8::7',
    });
    expect(attended.headers['x-access-budget-remaining']).toBe('1');
    expect(
      (await api.get(`/v1/accounts/${accountId}`, { 'consent-id': consentId })).headers[
        'x-access-budget-remaining'
      ],
    ).toBe('0');
    const refused = await refusedLocally(() =>
      api.get('/v1/accounts', { 'consent-id': consentId }),
    );
    expect([refused.status, refused.body.code]).toEqual([429, 'ACCESS_EXCEEDED']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // With the user present, reads go on.
    expect(
      (await api.get('/v1/accounts', { 'consent-id': consentId, 'psu-ip-address': '192.0.2.1' }))
        .status,
    ).toBe(200);
  });

  it('shares the daily budget between replicas', async () => {
    const replica = await startTestGateway();
    try {
      const { consentId } = await approvedConsent(gateway, key, { frequencyPerDay: 1 });
      // The second replica talks to its own sandbox, but the consent store and counters are shared.
      const other = facade(replica, key);
      expect((await api.get('/v1/accounts', { 'consent-id': consentId })).status).toBe(200);
      const refused = await other.get('/v1/accounts', { 'consent-id': consentId });
      expect([refused.status, refused.body.code]).toEqual([429, 'ACCESS_EXCEEDED']);
    } finally {
      await replica.close();
    }
  });

  it('refuses a bad request before the bank: product rules, past validUntil, missing headers', async () => {
    const sepaWithoutAgent = await refusedLocally(() =>
      api.post('/v1/payments', {
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
      }),
    );
    expect(sepaWithoutAgent.status).toBe(400);
    expect((sepaWithoutAgent.body.errors as { field: string }[]).map((e) => e.field)).toContain(
      'payment.creditorAgent',
    );

    const domesticInEur = await refusedLocally(() =>
      api.post('/v1/payments', {
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
      }),
    );
    expect((domesticInEur.body.errors as { field: string }[]).map((e) => e.field)).toContain(
      'payment.instructedAmount.currency',
    );

    const past = await refusedLocally(() =>
      api.post('/v1/consents', consentRequest({ validUntil: inDays(-2) })),
    );
    expect(past.body.errors).toEqual([
      { field: 'validUntil', reason: 'validUntil must not be in the past' },
    ]);

    const badAccess = await refusedLocally(() =>
      api.post(
        '/v1/consents',
        consentRequest({ access: { accounts: [{ iban: 'not an iban' }] }, redirectUri: 'ftp://x' }),
      ),
    );
    expect((badAccess.body.errors as { field: string }[]).map((e) => e.field)).toEqual(
      expect.arrayContaining(['access.accounts[0].iban', 'redirectUri']),
    );

    const noConsentHeader = await refusedLocally(() => api.get('/v1/accounts'));
    expect(noConsentHeader.body.errors).toEqual([
      {
        field: 'header:Consent-ID',
        reason: 'Consent-ID is required: the consentId Portico returned',
      },
    ]);
  });
});
