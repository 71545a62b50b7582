import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { consentRequest, domesticPayment, facade } from '../support/facade.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// A write whose answer is lost (the bank answers after the deadline, or acts and then fails) may exist
// at the bank: Portico keeps it in doubt and never sends it twice for one Idempotency-Key.
describe('writes whose outcome is unknown', () => {
  let gateway: TestGateway;
  let key: string;
  const calls = (operation: string) => gateway.sandbox.bank.control.calls()[operation] ?? 0;
  beforeAll(async () => {
    gateway = await startTestGateway({ UPSTREAM_DEADLINE_MS: '600' });
    ({ key } = await gateway.newTenantWithKey('app'));
  });
  afterAll(() => gateway.close());

  it('a payment answered after the deadline is in doubt, and the same key never reaches the bank again', async () => {
    gateway.sandbox.chaos.add({
      operation: 'initiatePayment',
      fault: 'delay',
      delayMs: 1500,
      times: 1,
    });
    const before = calls('initiatePayment');
    const headers = { 'idempotency-key': `pay-${Date.now()}` };
    const first = await facade(gateway, key).post<{
      status: number;
      outcome: string;
      paymentId: string;
      resource: string;
    }>('/v1/payments', domesticPayment(), headers);
    expect(first.status).toBe(504);
    expect(first.body).toMatchObject({ outcome: 'unknown', status: 504 });
    expect(first.body.resource).toBe(`/v1/payments/${first.body.paymentId}`);
    await new Promise((resolve) => setTimeout(resolve, 1200)); // the bank has now acted
    expect(calls('initiatePayment') - before).toBe(1);

    const again = await facade(gateway, key).post<{ paymentId: string }>(
      '/v1/payments',
      domesticPayment(),
      headers,
    );
    expect(again.status).toBe(504);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.paymentId).toBe(first.body.paymentId);
    expect(calls('initiatePayment') - before).toBe(1);

    const stored = await facade(gateway, key).get<{ status: string }>(first.body.resource);
    expect(stored.body.status).toBe('unknown');
  });

  it('a consent the bank created but whose answer failed is in doubt, not failed, and not created twice', async () => {
    gateway.sandbox.chaos.add({ operation: 'createConsent', fault: 'act-then-fail', times: 1 });
    const before = calls('createConsent');
    const headers = { 'idempotency-key': `consent-${Date.now()}` };
    const first = await facade(gateway, key).post<{ consentId: string; outcome: string }>(
      '/v1/consents',
      consentRequest(),
      headers,
    );
    expect(first.status).toBe(502);
    expect(first.body.outcome).toBe('unknown');
    const again = await facade(gateway, key).post('/v1/consents', consentRequest(), headers);
    expect(again.status).toBe(502);
    expect(calls('createConsent') - before).toBe(1);
    const [row] = await gateway.dataSource.query(`SELECT status FROM consents WHERE id = $1`, [
      first.body.consentId,
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
    const refused = await facade(gateway, own).post('/v1/payments', domesticPayment());
    expect(refused.status).toBe(400);
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
      const headers = { 'idempotency-key': `down-${Date.now()}` };
      const first = await facade(down, own).post('/v1/payments', domesticPayment(), headers);
      expect(first.status).toBe(502);
      const second = await facade(down, own).post('/v1/payments', domesticPayment(), headers);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      const rows = await down.dataSource.query(`SELECT status FROM payments WHERE tenant_id = $1`, [
        tenantId,
      ]);
      expect(rows).toEqual([{ status: 'failed' }, { status: 'failed' }]);
    } finally {
      await down.close();
    }
  });
});
