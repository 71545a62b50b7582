import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

// What a compliance officer reads: payments beside consents, every access, and the trail as a file.
describe("the auditor's views", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('shows payments with history and accesses, every access across resources, and exports the trail', async () => {
    const tenant = await gateway.newTenantWithKey('app');
    const app = porticoClient(gateway, tenant.key);
    const created = await app.POST('/v1/payments', { body: domesticPayment() });
    expect(created.response.status).toBe(201);
    const paymentId = created.data!.paymentId;
    await app.GET('/v1/payments/{paymentId}', { params: { path: { paymentId } } });
    const { consentId, accountId } = await approvedConsent(gateway, tenant.key);
    await app.GET('/v1/accounts/{accountId}/balances', {
      params: {
        path: { accountId },
        header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.1' },
      },
    });
    const auditorKey = (await gateway.newTenantWithKey('auditor')).key;
    const auditor = porticoClient(gateway, auditorKey);

    const page = await auditor.GET('/v1/audit/payments', {
      params: { query: { tenantId: tenant.tenantId, status: 'RCVD' } },
    });
    expect(page.data?.items.map((p) => p.paymentId)).toEqual([paymentId]);
    expect(page.data?.items[0].tenantId).toBe(tenant.tenantId);
    const detail = await auditor.GET('/v1/audit/payments/{paymentId}', {
      params: { path: { paymentId } },
    });
    expect(detail.data?.history.map((h) => `${h.from}->${h.to}`)).toEqual([
      'null->creating',
      'creating->RCVD',
    ]);
    expect(detail.data?.accessLog.map((a) => [a.operation, a.outcome]).reverse()).toEqual([
      ['initiatePayment', 'ok'],
      ['getPayment', 'ok'],
    ]);
    expect((await app.GET('/v1/audit/payments')).response.status).toBe(403);

    const accesses = await auditor.GET('/v1/audit/accesses', {
      params: { query: { tenantId: tenant.tenantId, kind: 'consent' } },
    });
    expect(accesses.data?.items.map((a) => [a.kind, a.resourceId, a.operation])).toEqual([
      ['consent', consentId, 'getAccountBalances'],
    ]);
    const bad = await auditor.GET('/v1/audit/accesses', {
      params: { query: { kind: 'refund' as never } },
    });
    expect(bad.response.status).toBe(400);

    const exported = await gateway.app.inject({
      method: 'GET',
      url: `/v1/audit/export?tenantId=${tenant.tenantId}`,
      headers: bearer(auditorKey),
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-disposition']).toContain('portico-audit-trail.json');
    const document = exported.json() as {
      verification: { ok: boolean; links: number };
      records: { kind: string; resourceId: string; at: string; operation: string | null }[];
    };
    expect(typeof document.verification.ok).toBe('boolean');
    const ofPayment = document.records.filter((r) => r.resourceId === paymentId);
    expect(ofPayment.map((r) => r.operation ?? r.kind)).toEqual([
      'status_change',
      'initiatePayment',
      'status_change',
      'getPayment',
    ]);
    const times = document.records.map((r) => r.at);
    expect([...times].sort()).toEqual(times);
  });
});
