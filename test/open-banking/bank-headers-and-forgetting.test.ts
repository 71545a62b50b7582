import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { ALICE_EUR, APP_REDIRECT, consentRequest, domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe("the facade passes on the bank's creation headers in its own form", () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key } = await gateway.newTenantWithKey('app'));
  });
  afterAll(() => gateway.close());

  it('answers a consent creation with its own Location and the SCA approach the bank named', async () => {
    const api = porticoClient(gateway, key);
    const created = await api.POST('/v1/consents', { body: consentRequest() });
    expect(created.response.status).toBe(201);
    const { consentId, scaApproach } = created.data!;
    expect(created.response.headers.get('location')).toBe(`/v1/consents/${consentId}`);
    expect(scaApproach).toBe('REDIRECT');
    const read = await api.GET('/v1/consents/{consentId}', { params: { path: { consentId } } });
    expect(read.data?.scaApproach).toBe('REDIRECT');
  });

  it('does the same for a confirmation-of-funds consent', async () => {
    const api = porticoClient(gateway, key);
    const created = await api.POST('/v1/funds-confirmation-consents', {
      body: { brandId: 'danube-bank', account: { iban: ALICE_EUR }, redirectUri: APP_REDIRECT },
    });
    expect(created.response.status).toBe(201);
    const { consentId, scaApproach } = created.data!;
    expect(created.response.headers.get('location')).toBe(
      `/v1/funds-confirmation-consents/${consentId}`,
    );
    expect(scaApproach).toBe('REDIRECT');
  });

  it('does the same for a payment, and keeps the approach on later reads', async () => {
    const api = porticoClient(gateway, key);
    const created = await api.POST('/v1/payments', { body: domesticPayment() });
    expect(created.response.status).toBe(201);
    const { paymentId, scaApproach } = created.data!;
    expect(created.response.headers.get('location')).toBe(`/v1/payments/${paymentId}`);
    expect(scaApproach).toBe('REDIRECT');
    const read = await api.GET('/v1/payments/{paymentId}', { params: { path: { paymentId } } });
    expect(read.data?.scaApproach).toBe('REDIRECT');
  });

  it('replays the Location with an idempotent repeat', async () => {
    const api = porticoClient(gateway, key);
    const params = { header: { 'Idempotency-Key': `location-${Date.now()}` } };
    const first = await api.POST('/v1/consents', { params, body: consentRequest() });
    const repeat = await api.POST('/v1/consents', { params, body: consentRequest() });
    expect(repeat.response.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.response.headers.get('location')).toBe(first.response.headers.get('location'));
  });
});

describe('a consent the bank no longer knows', () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key } = await gateway.newTenantWithKey('app'));
  });
  afterAll(() => gateway.close());

  /** The sandbox forgets every consent, as a bank that lost or purged them would. */
  const bankForgets = async () => {
    const reset = await fetch(`${gateway.sandbox.scaUrl}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(204);
  };

  it('is answered with a problem that names it and says to renew it, and is recorded forgottenByBank', async () => {
    const { consentId } = await approvedConsent(gateway, key);
    await bankForgets();
    const api = porticoClient(gateway, key);
    const read = await api.GET('/v1/accounts', {
      params: { header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.10' } },
    });
    expect(read.response.status).toBe(401);
    expect(read.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(read.error).toMatchObject({
      type: 'urn:portico:problem:consent:renewal-required',
      title: 'Consent must be renewed',
      status: 401,
      code: 'CONSENT_INVALID',
      consentId,
    });
    expect(read.error?.detail).toContain(consentId);
    expect(read.error?.detail).toMatch(/renew/i);

    const stored = await api.GET('/v1/consents/{consentId}', {
      params: { path: { consentId } },
    });
    expect(stored.data?.status).toBe('forgottenByBank');
    const [change] = await gateway.dataSource.query(
      `SELECT from_status, to_status, cause FROM status_changes
        WHERE subject_id = $1 ORDER BY id DESC LIMIT 1`,
      [consentId],
    );
    expect(change).toEqual({
      from_status: 'valid',
      to_status: 'forgottenByBank',
      cause: 'forgotten-by-bank',
    });

    // Later reads are refused the same way without asking the bank; deleting it is harmless.
    const calls = () => gateway.sandbox.bank.control.calls().listAccounts ?? 0;
    const before = calls();
    const again = await api.GET('/v1/accounts', {
      params: { header: { 'Consent-ID': consentId } },
    });
    expect([again.response.status, again.error?.type]).toEqual([
      401,
      'urn:portico:problem:consent:renewal-required',
    ]);
    expect(calls()).toBe(before);
    const deleted = await api.DELETE('/v1/consents/{consentId}', {
      params: { path: { consentId } },
    });
    expect(deleted.response.status).toBe(204);
  });

  it('shows forgottenByBank when the app reads the consent itself', async () => {
    const { consentId } = await approvedConsent(gateway, key);
    await bankForgets();
    const status = await porticoClient(gateway, key).GET('/v1/consents/{consentId}/status', {
      params: { path: { consentId } },
    });
    expect(status.data).toEqual({ consentId, status: 'forgottenByBank' });
  });
});
