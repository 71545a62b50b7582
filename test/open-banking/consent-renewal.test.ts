import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { consentRequest } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// RTS Art. 10a: unattended account information needs the user's SCA again every 180 days.
describe('consent renewal', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('shows when SCA is due again, and retires the renewed consent once its renewal is authorised', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const api = porticoClient(gateway, key);
    const first = await approvedConsent(gateway, key);
    const before = await api.GET('/v1/consents/{consentId}', {
      params: { path: { consentId: first.consentId } },
    });
    const lastSca = Date.parse(before.data!.lastScaAt!);
    expect(Date.parse(before.data!.scaRenewalDueAt!)).toBe(lastSca + 180 * 86_400_000);
    expect(before.data!.renewsConsentId).toBeNull();

    const other = await gateway.newTenantWithKey('app');
    const foreign = await porticoClient(gateway, other.key).POST('/v1/consents', {
      body: {
        ...consentRequest(),
        renewsConsentId: first.consentId,
      },
    });
    expect(foreign.response.status).toBe(404);

    const renewal = await approvedConsent(gateway, key, { renewsConsentId: first.consentId });
    const renewed = await api.GET('/v1/consents/{consentId}', {
      params: { path: { consentId: renewal.consentId } },
    });
    expect(renewed.data).toMatchObject({ status: 'valid', renewsConsentId: first.consentId });
    const old = await api.GET('/v1/consents/{consentId}', {
      params: { path: { consentId: first.consentId } },
    });
    expect(old.data?.status).toBe('terminatedByTpp');
    const auditor = porticoClient(gateway, (await gateway.newTenantWithKey('auditor')).key);
    const history = await auditor.GET('/v1/audit/consents/{consentId}', {
      params: { path: { consentId: first.consentId } },
    });
    expect(history.data?.history.at(-1)).toMatchObject({
      from: 'valid',
      to: 'terminatedByTpp',
      cause: `renewed-by:${renewal.consentId}`,
    });
    expect(gateway.sandbox.bank.control.calls().deleteConsent).toBeGreaterThanOrEqual(1);
  });
});
