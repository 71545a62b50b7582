import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { consentRequest, domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

type InDoubt = { outcome?: string; paymentId?: string; consentId?: string; resource?: string };

// A write whose answer is lost (the bank answers after the deadline, or acts and then fails) may exist
// at the bank: Portico keeps it in doubt and never sends it twice for one Idempotency-Key.
describe('writes whose outcome is unknown', () => {
  let gateway: TestGateway;
  let key: string;
  const calls = (operation: string) => gateway.sandbox.bank.control.calls()[operation] ?? 0;
  beforeAll(async () => {
    // A deadline that every answer in time meets on a loaded machine (the mTLS call, the bank's work):
    // only the delayed answer below passes it.
    gateway = await startTestGateway({ UPSTREAM_DEADLINE_MS: '3000' });
    ({ key } = await gateway.newTenantWithKey('app'));
  });
  afterAll(() => gateway.close());

  it('a payment answered after the deadline is in doubt, and the same key never reaches the bank again', async () => {
    gateway.sandbox.chaos.add({
      operation: 'initiatePayment',
      fault: 'delay',
      delayMs: 6000,
      times: 1,
    });
    const before = calls('initiatePayment');
    const header = { 'Idempotency-Key': `pay-${Date.now()}` };
    const api = porticoClient(gateway, key);
    const first = await api.POST('/v1/payments', { body: domesticPayment(), params: { header } });
    const problem = first.error as InDoubt;
    expect(first.response.status).toBe(504);
    expect(problem).toMatchObject({ outcome: 'unknown', status: 504 });
    expect(problem.resource).toBe(`/v1/payments/${problem.paymentId}`);
    // The bank acted before the deadline passed: a delay holds its answer, not its action.
    expect(calls('initiatePayment') - before).toBe(1);

    // Still in doubt: 409 with Retry-After (the key answers the payment once the resolver settled it).
    const again = await api.POST('/v1/payments', { body: domesticPayment(), params: { header } });
    expect(again.response.status).toBe(409);
    expect(again.response.headers.get('retry-after')).toBe('5');
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.error as InDoubt).toMatchObject({
      outcome: 'unknown',
      resource: problem.resource,
    });
    expect((again.error as InDoubt).paymentId).toBe(problem.paymentId);
    expect(calls('initiatePayment') - before).toBe(1);

    const stored = await api.GET('/v1/payments/{paymentId}', {
      params: { path: { paymentId: problem.paymentId as string } },
    });
    expect(stored.data?.status).toBe('unknown');
  });

  it('a consent the bank created but whose answer failed is in doubt, not failed, and not created twice', async () => {
    gateway.sandbox.chaos.add({ operation: 'createConsent', fault: 'act-then-fail', times: 1 });
    const before = calls('createConsent');
    const header = { 'Idempotency-Key': `consent-${Date.now()}` };
    const api = porticoClient(gateway, key);
    const first = await api.POST('/v1/consents', { body: consentRequest(), params: { header } });
    expect(first.response.status).toBe(502);
    const problem = first.error as InDoubt;
    expect(problem.outcome).toBe('unknown');
    const again = await api.POST('/v1/consents', { body: consentRequest(), params: { header } });
    expect(again.response.status).toBe(409);
    expect((again.error as InDoubt).consentId).toBe(problem.consentId);
    expect(calls('createConsent') - before).toBe(1);
    const [row] = await gateway.dataSource.query(`SELECT status FROM consents WHERE id = $1`, [
      problem.consentId,
    ]);
    expect(row.status).toBe('unknown');
  });

  it('a write the bank refused is failed, not in doubt', async () => {
    const { tenantId, key: own } = await gateway.newTenantWithKey('app');
    gateway.sandbox.chaos.add({
      operation: 'initiatePayment',
      fault: 'status',
      status: 400,
      times: 1,
    });
    const refused = await porticoClient(gateway, own).POST('/v1/payments', {
      body: domesticPayment(),
    });
    expect(refused.response.status).toBe(400);
    const rows = await gateway.dataSource.query(
      `SELECT status FROM payments WHERE tenant_id = $1`,
      [tenantId],
    );
    expect(rows).toEqual([{ status: 'failed' }]);
  });

  it('a write sent to a bank that refuses connections is failed and its key freed', async () => {
    const down = await startTestGateway({
      UPSTREAM_OB_BASE_URL: `https://localhost:${await freePort()}`,
    });
    try {
      const { tenantId, key: own } = await down.newTenantWithKey('app');
      const header = { 'Idempotency-Key': `down-${Date.now()}` };
      const api = porticoClient(down, own);
      const first = await api.POST('/v1/payments', { body: domesticPayment(), params: { header } });
      expect(first.response.status).toBe(502);
      const second = await api.POST('/v1/payments', {
        body: domesticPayment(),
        params: { header },
      });
      expect(second.response.headers.get('idempotent-replayed')).toBeNull();
      const rows = await down.dataSource.query(`SELECT status FROM payments WHERE tenant_id = $1`, [
        tenantId,
      ]);
      expect(rows).toEqual([{ status: 'failed' }, { status: 'failed' }]);
    } finally {
      await down.close();
    }
  });
});
