import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PorticoClient } from '#src/client/portico-client.js';
import { approvedConsent } from '../support/consent-flow.js';
import { ALICE, ALICE_EUR, ALICE_HUF } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { completeSca } from '../support/sca.js';
import { bankCallCount, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('confirmation of funds through the facade', () => {
  let gateway: TestGateway;
  let key: string;
  let api: PorticoClient;
  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await gateway.newTenantWithKey('app')).key;
    api = porticoClient(gateway, key);
  });
  afterAll(() => gateway.close());

  const approvedFundsConsent = async (iban: string) => {
    const created = await api.POST('/v1/funds-confirmation-consents', {
      body: { brandId: 'danube-bank', account: { iban }, redirectUri: 'https://app.example/funds' },
    });
    expect(created.response.status).toBe(201);
    expect(created.data!.kind).toBe('cof');
    const callback = new URL(
      await completeSca(created.data!._links.scaRedirect!, { ...ALICE, decision: 'approve' }),
    );
    expect(
      (await gateway.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}` }))
        .statusCode,
    ).toBe(303);
    return created.data!.consentId;
  };
  const bankCalls = () => bankCallCount(gateway);
  const consent = (consentId: string) => ({ params: { path: { consentId } } });
  const under = (consentId: string) => ({ header: { 'Consent-ID': consentId } });

  it('answers whether the account covers an amount, under an approved consent', async () => {
    const consentId = await approvedFundsConsent(ALICE_EUR);
    expect(
      (await api.GET('/v1/funds-confirmation-consents/{consentId}/status', consent(consentId)))
        .data!.status,
    ).toBe('valid');
    const enough = await api.POST('/v1/funds-confirmations', {
      params: under(consentId),
      body: {
        account: { iban: ALICE_EUR },
        instructedAmount: { currency: 'EUR', amount: '10.00' },
      },
    });
    expect([enough.response.status, enough.data]).toEqual([200, { fundsAvailable: true }]);
    const tooMuch = await api.POST('/v1/funds-confirmations', {
      params: under(consentId),
      body: {
        account: { iban: ALICE_EUR },
        instructedAmount: { currency: 'EUR', amount: '900000.00' },
      },
    });
    expect(tooMuch.data).toEqual({ fundsAvailable: false });
  });

  it("refuses locally another account than the consent's, and an account-information consent", async () => {
    const consentId = await approvedFundsConsent(ALICE_EUR);
    const before = bankCalls();
    const otherAccount = await api.POST('/v1/funds-confirmations', {
      params: under(consentId),
      body: { account: { iban: ALICE_HUF }, instructedAmount: { currency: 'HUF', amount: '1.00' } },
    });
    expect([otherAccount.response.status, otherAccount.error?.code]).toEqual([
      403,
      'RESOURCE_UNKNOWN',
    ]);
    expect(bankCalls() - before).toBe(0);
    const ais = await approvedConsent(gateway, key);
    const beforeWrongKind = bankCalls();
    const wrongKind = await api.POST('/v1/funds-confirmations', {
      params: under(ais.consentId),
      body: { account: { iban: ALICE_EUR }, instructedAmount: { currency: 'EUR', amount: '1.00' } },
    });
    expect([wrongKind.response.status, wrongKind.error?.code]).toEqual([401, 'CONSENT_INVALID']);
    expect(bankCalls() - beforeWrongKind).toBe(0);
  });

  it('deletes a funds consent, twice harmlessly, and refuses deleting a rejected one with 409', async () => {
    const consentId = await approvedFundsConsent(ALICE_EUR);
    const remove = (id: string) =>
      api.DELETE('/v1/funds-confirmation-consents/{consentId}', consent(id));
    expect((await remove(consentId)).response.status).toBe(204);
    expect((await remove(consentId)).response.status).toBe(204);
    expect(
      (await api.GET('/v1/funds-confirmation-consents/{consentId}', consent(consentId))).data!
        .status,
    ).toBe('terminatedByTpp');

    const denied = await api.POST('/v1/funds-confirmation-consents', {
      body: {
        brandId: 'danube-bank',
        account: { iban: ALICE_EUR },
        redirectUri: 'https://app.example/funds',
      },
    });
    const callback = new URL(
      await completeSca(denied.data!._links.scaRedirect!, { ...ALICE, decision: 'deny' }),
    );
    await gateway.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    const refused = await remove(denied.data!.consentId);
    expect([refused.response.status, refused.error?.code]).toEqual([409, 'STATUS_INVALID']);
  });
});
