import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { ALICE, ALICE_EUR, ALICE_HUF, facade } from '../support/facade.js';
import { completeSca } from '../support/sca.js';
import { bankCallCount, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('confirmation of funds through the facade', () => {
  let gateway: TestGateway;
  let key: string;
  let api: ReturnType<typeof facade>;
  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await gateway.newTenantWithKey('app')).key;
    api = facade(gateway, key);
  });
  afterAll(() => gateway.close());

  const approvedFundsConsent = async (iban: string) => {
    const created = await api.post<{
      consentId: string;
      kind: string;
      _links: { scaRedirect: string };
    }>('/v1/funds-confirmation-consents', {
      brandId: 'danube-bank',
      account: { iban },
      redirectUri: 'https://app.example/funds',
    });
    expect(created.status).toBe(201);
    expect(created.body.kind).toBe('cof');
    const callback = new URL(
      await completeSca(created.body._links.scaRedirect, { ...ALICE, decision: 'approve' }),
    );
    expect(
      (await gateway.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}` }))
        .statusCode,
    ).toBe(303);
    return created.body.consentId;
  };
  const bankCalls = () => bankCallCount(gateway);

  it('answers whether the account covers an amount, under an approved consent', async () => {
    const consentId = await approvedFundsConsent(ALICE_EUR);
    expect(
      (await api.get<{ status: string }>(`/v1/funds-confirmation-consents/${consentId}/status`))
        .body.status,
    ).toBe('valid');
    const enough = await api.post(
      '/v1/funds-confirmations',
      { account: { iban: ALICE_EUR }, instructedAmount: { currency: 'EUR', amount: '10.00' } },
      { 'consent-id': consentId },
    );
    expect([enough.status, enough.body]).toEqual([200, { fundsAvailable: true }]);
    const tooMuch = await api.post(
      '/v1/funds-confirmations',
      { account: { iban: ALICE_EUR }, instructedAmount: { currency: 'EUR', amount: '900000.00' } },
      { 'consent-id': consentId },
    );
    expect(tooMuch.body).toEqual({ fundsAvailable: false });
  });

  it("refuses locally another account than the consent's, and an account-information consent", async () => {
    const consentId = await approvedFundsConsent(ALICE_EUR);
    const before = bankCalls();
    const otherAccount = await api.post(
      '/v1/funds-confirmations',
      { account: { iban: ALICE_HUF }, instructedAmount: { currency: 'HUF', amount: '1.00' } },
      { 'consent-id': consentId },
    );
    expect([otherAccount.status, otherAccount.body.code]).toEqual([403, 'RESOURCE_UNKNOWN']);
    expect(bankCalls() - before).toBe(0);
    const ais = await approvedConsent(gateway, key);
    const beforeWrongKind = bankCalls();
    const wrongKind = await api.post(
      '/v1/funds-confirmations',
      { account: { iban: ALICE_EUR }, instructedAmount: { currency: 'EUR', amount: '1.00' } },
      { 'consent-id': ais.consentId },
    );
    expect([wrongKind.status, wrongKind.body.code]).toEqual([401, 'CONSENT_INVALID']);
    expect(bankCalls() - beforeWrongKind).toBe(0);
  });

  it('deletes a funds consent, twice harmlessly, and refuses deleting a rejected one with 409', async () => {
    const consentId = await approvedFundsConsent(ALICE_EUR);
    expect((await api.delete(`/v1/funds-confirmation-consents/${consentId}`)).status).toBe(204);
    expect((await api.delete(`/v1/funds-confirmation-consents/${consentId}`)).status).toBe(204);
    expect(
      (await api.get<{ status: string }>(`/v1/funds-confirmation-consents/${consentId}`)).body
        .status,
    ).toBe('terminatedByTpp');

    const denied = await api.post<{ consentId: string; _links: { scaRedirect: string } }>(
      '/v1/funds-confirmation-consents',
      {
        brandId: 'danube-bank',
        account: { iban: ALICE_EUR },
        redirectUri: 'https://app.example/funds',
      },
    );
    const callback = new URL(
      await completeSca(denied.body._links.scaRedirect, { ...ALICE, decision: 'deny' }),
    );
    await gateway.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    const refused = await api.delete(`/v1/funds-confirmation-consents/${denied.body.consentId}`);
    expect([refused.status, refused.body.code]).toEqual([409, 'STATUS_INVALID']);
  });
});
