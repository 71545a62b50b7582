import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { until } from '../support/chaos.js';
import { domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

interface Row {
  id: string;
  operation: string;
  outcome: string;
  upstream_status: number | null;
  latency_ms: number | null;
  completed_at: Date | null;
  request_id: string | null;
}

// A call under a consent or a payment is in the access log before the bank sees it, and completed after.
describe('the write-ahead access log', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      UPSTREAM_RETRY_DELAYS_MS: 'none',
      UPSTREAM_DEADLINE_MS: '3000',
    });
  });
  afterAll(() => gateway.close());

  const rowsOf = (column: 'consent_id' | 'payment_id', id: string) =>
    gateway.dataSource.query(
      `SELECT id, operation, outcome, upstream_status, latency_ms, completed_at, request_id
       FROM access_log WHERE ${column} = $1 ORDER BY id`,
      [id],
    ) as Promise<Row[]>;
  const served = (operation: string) => gateway.sandbox.bank.control.calls()[operation] ?? 0;

  async function readUnderConsent() {
    const { key } = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const api = porticoClient(gateway, key);
    const read = () =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: {
          path: { accountId },
          header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.10' },
        },
      });
    return { consentId, read };
  }

  it('holds a `sent` row while the bank serves a read, and completes it after the answer, by itself', async () => {
    const { consentId, read } = await readUnderConsent();
    // The bank serves the read at once and holds its answer back: the call is in flight.
    gateway.sandbox.chaos.add({
      operation: 'getBalances',
      fault: 'delay',
      delayMs: 1500,
      times: 1,
    });
    const before = served('getBalances');
    const pending = read();
    await until(() => served('getBalances') > before);

    const inFlight = await rowsOf('consent_id', consentId);
    expect(inFlight.map((r) => [r.operation, r.outcome, r.latency_ms, r.completed_at])).toEqual([
      ['getAccountBalances', 'sent', null, null],
    ]);
    const [requestId] = gateway.sandbox.bank.control.requestIds('getBalances').slice(-1);
    expect(inFlight[0].request_id).toBe(requestId);

    expect((await pending).response.status).toBe(200);
    // Written after the answer, by a statement of its own when no other call carries it: nothing else
    // is sent here, so this waits for that one (within COMPLETION_DELAY_MS, scheduling aside).
    let done = inFlight[0];
    for (let waited = 0; done.outcome === 'sent' && waited < 5000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      [done] = await rowsOf('consent_id', consentId);
    }
    expect(done).toMatchObject({ id: inFlight[0].id, outcome: 'ok', upstream_status: 200 });
    expect(done.latency_ms).toBeGreaterThanOrEqual(0);
    expect(done.completed_at).toBeInstanceOf(Date);
  });

  it('records a read the bank never answered as unknown, and one answered with bad JSON or a stalled body as failed (502 to the app)', async () => {
    const { consentId, read } = await readUnderConsent();
    gateway.sandbox.chaos.add({ operation: 'getBalances', fault: 'hang', times: 1 });
    const hung = await read();
    expect(hung.response.status).toBe(504);

    gateway.sandbox.chaos.add({ operation: 'getBalances', fault: 'bad-json', times: 1 });
    const badJson = await read();
    expect(badJson.response.status).toBe(502);
    expect(badJson.response.headers.get('content-type')).toMatch(/application\/problem\+json/);

    gateway.sandbox.chaos.add({ operation: 'getBalances', fault: 'stall-body', times: 1 });
    const stalled = await read();
    expect(stalled.response.status).toBe(502);
    expect(stalled.response.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const rows = await rowsOf('consent_id', consentId);
    expect(rows.map((r) => r.outcome)).toEqual([
      'unknown:504',
      'failed:bad-response',
      'failed:bad-response',
    ]);
    expect(rows.filter((r) => r.completed_at === null)).toEqual([]);
  });

  it('writes the payment initiation ahead of the bank call', async () => {
    const { key, tenantId } = await gateway.newTenantWithKey('app');
    const api = porticoClient(gateway, key);
    gateway.sandbox.chaos.add({
      operation: 'initiatePayment',
      fault: 'delay',
      delayMs: 1500,
      times: 1,
    });
    const before = served('initiatePayment');
    const pending = api.POST('/v1/payments', {
      body: domesticPayment(),
      params: { header: { 'Idempotency-Key': `wal-${Date.now()}` } },
    });
    await until(() => served('initiatePayment') > before);
    const [payment] = (await gateway.dataSource.query(
      `SELECT id FROM payments WHERE tenant_id = $1`,
      [tenantId],
    )) as { id: string }[];
    const inFlight = await rowsOf('payment_id', payment.id);
    expect(inFlight.map((r) => [r.operation, r.outcome])).toEqual([['initiatePayment', 'sent']]);

    const created = await pending;
    expect(created.response.status).toBe(201);
    expect(created.data?.paymentId).toBe(payment.id);
    const [done] = await rowsOf('payment_id', payment.id);
    expect([done.outcome, done.upstream_status]).toEqual(['ok', 201]);
  });

  it('lets a `sent` row be completed once and nothing else change', async () => {
    const { tenantId } = await gateway.newTenantWithKey('app');
    const [{ id }] = (await gateway.dataSource.query(
      `INSERT INTO access_log (tenant_id, operation, psu_present, outcome)
       VALUES ($1, 'getAccountBalances', false, 'sent') RETURNING id`,
      [tenantId],
    )) as { id: string }[];
    const update = (set: string) =>
      gateway.dataSource.query(`UPDATE access_log SET ${set} WHERE id = $1`, [id]);

    await expect(
      update(`operation = 'listAccounts', outcome = 'ok', completed_at = now()`),
    ).rejects.toThrow(/append-only/);
    await expect(update(`outcome = 'ok'`)).rejects.toThrow(/append-only/);
    await update(`outcome = 'ok', upstream_status = 200, latency_ms = 5, completed_at = now()`);
    await expect(
      update(`outcome = 'upstream:CONSENT_INVALID', completed_at = now()`),
    ).rejects.toThrow(/append-only/);
    await expect(
      gateway.dataSource.query(`DELETE FROM access_log WHERE id = $1`, [id]),
    ).rejects.toThrow(/append-only/);
    const [row] = (await gateway.dataSource.query(
      `SELECT outcome, upstream_status FROM access_log WHERE id = $1`,
      [id],
    )) as { outcome: string; upstream_status: number }[];
    expect(row).toEqual({ outcome: 'ok', upstream_status: 200 });
  });
});
