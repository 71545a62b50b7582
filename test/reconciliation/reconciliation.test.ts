import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { COMMANDS } from '#src/cli/commands.js';
import { ReconciliationRuns } from '#src/reconciliation/reconciliation-runs.service.js';
import { ReconciliationService } from '#src/reconciliation/reconciliation.service.js';
import type { RunWindow } from '#src/reconciliation/reconciliation.repository.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posTenant, type PosTenant } from '../support/pos-gateway.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '4556390755719395',
  expirationMonth: '12',
  expirationYear: String(new Date().getUTCFullYear() + 3),
  holderName: 'Grace Hopper',
  cvv: '321',
};

type Json = Record<string, unknown>;

/**
 * Reconciliation against the sandbox: every class made at the provider (a lapsed pre-authorisation, a
 * refund and a payment made in the dashboard, a corrected amount) or in Portico's records (a status
 * ahead, a row the provider never made), run by two replicas on one window: each found, settled,
 * adopted or flagged exactly once; a clean day reports no drift; a run whose process died is run again
 * without adopting twice.
 */
describe('reconciliation: Portico proves its records match the provider', () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let replica: TestGateway;
  let operatorKey: string;
  let auditorKey: string;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    database = await ownDatabase('recon');
    sut = await startTestGateway({ DATABASE_URL: database.url });
    replica = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_CARD_BASE_URL: sut.sandbox.cardUrl,
    });
    operatorKey = (await sut.newTenantWithKey('operator')).key;
    auditorKey = (await sut.newTenantWithKey('auditor')).key;
  }, 120_000);
  afterAll(async () => {
    await replica?.close();
    await sut?.close();
    await database?.drop();
  });

  const pay = async (app: PosTenant, body: Json) => {
    const response = await sut.app.inject({
      method: 'POST',
      url: '/v1/card/payments',
      headers: { ...bearer(app.key), 'idempotency-key': randomUUID() },
      payload: { ...CARD, ...body },
    });
    expect([response.statusCode, response.body]).toEqual([201, expect.any(String)]);
    return response.json<{ token: string; status: string }>();
  };
  const dashboard = async (app: PosTenant, path: string, body: Json) => {
    const response = await request(
      `${sut.sandbox.scaUrl}/sandbox/card/merchants/${app.merchantId}/dashboard${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
    );
    expect(response.statusCode).toBe(200);
    return (await response.body.json()) as { token: string };
  };
  const query = <T = Json>(sql: string, params: unknown[]) =>
    sut.dataSource.query(sql, params) as Promise<T[]>;
  const audit = async (path: string) => {
    const response = await sut.app.inject({
      method: 'GET',
      url: path,
      headers: bearer(auditorKey),
    });
    expect(response.statusCode).toBe(200);
    return response.json<{ totalCount: number; items: Json[] }>();
  };
  /** The sandbox's day (its clock moves forward in the first test): the provider dates by it. */
  const providerDay = async () => {
    const clock = await request(`${sut.sandbox.scaUrl}/sandbox/card/clock`);
    return ((await clock.body.json()) as { now: string }).now.slice(0, 10);
  };
  const window = (app: PosTenant): RunWindow => ({
    tenantId: app.tenantId,
    capability: 'card',
    from: today,
    to: today,
  });

  it('settles, adopts and flags every class exactly once, two replicas running one window', async () => {
    const app = await posTenant(sut);
    const matched = await pay(app, { amount: 1_000 });
    const held = await pay(app, { amount: 1_500, capture: 0 });
    const refundedAtDesk = await pay(app, { amount: 2_000 });
    const corrected = await pay(app, { amount: 3_000 });
    const ahead = await pay(app, { amount: 1_200 });
    expect(held.status).toBe('Pre Authorized');

    // At the provider, outside Portico: a refund, a payment, a corrected amount; then 7 days pass.
    const deskRefund = await dashboard(app, '/refunds', {
      payment: refundedAtDesk.token,
      amount: 500,
    });
    const deskPayment = await dashboard(app, '/payments', { amount: 4_400, merchantRef: 'desk-1' });
    await dashboard(app, `/payments/${corrected.token}/amount`, { amount: 3_100 });
    // In Portico's records: a status ahead of the provider's, a payment the provider never made.
    await query(`UPDATE provider_resources SET status = 'Refunded' WHERE token = $1`, [
      ahead.token,
    ]);
    const phantom = `pmt_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await query(
      `INSERT INTO provider_resources (id, tenant_id, kind, token, merchant_ref, status, amount, data)
       VALUES ($1, $2, 'payment', $3, $4, 'Captured', 700, '{"fee_amount": 31, "refund_amount": 0}')`,
      [randomUUID(), app.tenantId, phantom, `portico-${randomUUID()}`],
    );
    const clock = await request(`${sut.sandbox.scaUrl}/sandbox/card/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advanceSeconds: 7 * 86_400 + 60 }),
    });
    expect(clock.statusCode).toBe(200);

    const runs = await Promise.all([
      sut.app.get(ReconciliationService).run(window(app), 'on-demand'),
      replica.app.get(ReconciliationService).run(window(app), 'on-demand'),
    ]);
    const first = runs.find((run) => run !== undefined)!;
    expect(first.status).toBe('succeeded');
    // Run again (the replica), after: everything now matches, nothing is flagged a second time.
    const again = await replica.app.get(ReconciliationService).run(window(app), 'on-demand');
    const all = [...runs.filter((run) => run !== undefined), again!];
    const total = (name: string) =>
      all.reduce((sum, run) => sum + ((run.counts as Record<string, number>)[name] ?? 0), 0);
    expect(total('moved')).toBe(2);
    expect(total('adopted')).toBe(2);
    expect(again!.counts).toMatchObject({ moved: 0, adopted: 0, matched: 5, 'portico-only': 1 });
    // Every list page at most 20 items; the provider's calls counted.
    expect(first.requests).toBeGreaterThanOrEqual(3);

    // Moved once each, cause `reconciled`, with its event.
    const movedRows = await query<{ token: string; to_status: string }>(
      `SELECT r.token, c.to_status FROM status_changes c JOIN provider_resources r ON r.id = c.subject_id
        WHERE r.tenant_id = $1 AND c.cause = 'reconciled' ORDER BY r.token`,
      [app.tenantId],
    );
    expect(movedRows).toHaveLength(2);
    expect(Object.fromEntries(movedRows.map((row) => [row.token, row.to_status]))).toEqual({
      [held.token]: 'Canceled',
      [refundedAtDesk.token]: 'Partially Refunded',
    });
    // Adopted once each: origin provider, cause found-at-provider.
    const adopted = await query<{ token: string; kind: string; status: string; origin: string }>(
      `SELECT r.token, r.kind, r.status, r.origin FROM provider_resources r
        WHERE r.tenant_id = $1 AND r.token = ANY($2) ORDER BY r.kind`,
      [app.tenantId, [deskPayment.token, deskRefund.token]],
    );
    expect(adopted).toEqual([
      { token: deskPayment.token, kind: 'payment', status: 'Captured', origin: 'provider' },
      { token: deskRefund.token, kind: 'refund', status: 'Captured', origin: 'provider' },
    ]);
    const [adoptedRow] = await query<{ id: string }>(
      'SELECT id FROM provider_resources WHERE tenant_id = $1 AND token = $2',
      [app.tenantId, deskPayment.token],
    );
    const shown = await sut.app.inject({
      method: 'GET',
      url: `/v1/audit/card-resources/${adoptedRow.id}`,
      headers: bearer(auditorKey),
    });
    expect(shown.json()).toMatchObject({
      origin: 'provider',
      merchantRef: 'desk-1',
      history: [
        { to: 'creating', cause: 'created' },
        { from: 'creating', to: 'Captured', cause: 'found-at-provider' },
      ],
    });
    const foundCauses = await query<{ n: string }>(
      `SELECT count(*) AS n FROM status_changes WHERE tenant_id = $1 AND cause = 'found-at-provider'`,
      [app.tenantId],
    );
    expect(Number(foundCauses[0].n)).toBe(2);
    const events = await query<{ type: string; body: string }>(
      `SELECT type, body FROM webhook_events WHERE tenant_id = $1 ORDER BY created_at`,
      [app.tenantId],
    );
    const causes = events.map((event) => {
      const data = (JSON.parse(event.body) as { data: Json }).data;
      return `${event.type}:${String(data.cause ?? data.class)}`;
    });
    expect(causes.filter((cause) => cause.endsWith(':reconciled'))).toHaveLength(2);
    expect(causes.filter((cause) => cause.endsWith(':found-at-provider')).sort()).toEqual([
      'card_payment.status_changed:found-at-provider',
      'card_refund.status_changed:found-at-provider',
    ]);
    expect(causes.filter((cause) => cause.startsWith('reconciliation.drift')).sort()).toEqual([
      'reconciliation.drift:amount-differs',
      'reconciliation.drift:portico-ahead',
      'reconciliation.drift:portico-only',
    ]);

    // Flagged once each with both sides' values; never overwritten, never deleted.
    const drifts = await audit(`/v1/audit/reconciliation/drifts?tenantId=${app.tenantId}`);
    expect(drifts.totalCount).toBe(3);
    const byClass = Object.fromEntries(drifts.items.map((drift) => [drift.class, drift]));
    expect(byClass['amount-differs']).toMatchObject({
      token: corrected.token,
      portico: { status: 'Captured', amount: 3_000, fee: 65 },
      provider: { status: 'Captured', amount: 3_100, fee: 67 },
    });
    expect(byClass['portico-ahead']).toMatchObject({
      token: ahead.token,
      portico: { status: 'Refunded' },
      provider: { status: 'Captured' },
    });
    expect(byClass['portico-only']).toMatchObject({ token: phantom, provider: null });
    const kept = await query<{ token: string; status: string; amount: number }>(
      'SELECT token, status, amount FROM provider_resources WHERE token = ANY($1) ORDER BY amount',
      [[corrected.token, ahead.token, phantom]],
    );
    expect(kept).toEqual([
      { token: phantom, status: 'Captured', amount: 700 },
      { token: ahead.token, status: 'Refunded', amount: 1_200 },
      { token: corrected.token, status: 'Captured', amount: 3_000 },
    ]);
    expect(matched.status).toBe('Captured');

    const listed = await audit(`/v1/audit/reconciliation/runs?tenantId=${app.tenantId}`);
    expect(listed.items[0]).toMatchObject({ from: today, to: today, status: 'succeeded' });
  }, 120_000);

  it('reports a clean day as 0 drifts, run on demand by an operator', async () => {
    const app = await posTenant(sut);
    const paid = await pay(app, { amount: 2_400 });
    await pay(app, { amount: 900, capture: 0 });
    const refund = await sut.app.inject({
      method: 'POST',
      url: '/v1/card/refunds',
      headers: { ...bearer(app.key), 'idempotency-key': randomUUID() },
      payload: { payment: paid.token, amount: 400 },
    });
    expect(refund.statusCode).toBe(201);

    const response = await sut.app.inject({
      method: 'POST',
      url: '/v1/reconciliation/runs',
      headers: bearer(operatorKey),
      payload: { tenantId: app.tenantId, from: today, to: today },
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      status: 'succeeded',
      trigger: 'on-demand',
      counts: {
        matched: 3,
        moved: 0,
        adopted: 0,
        'amount-differs': 0,
        'portico-ahead': 0,
        'portico-only': 0,
      },
    });
    expect(
      (await audit(`/v1/audit/reconciliation/drifts?tenantId=${app.tenantId}`)).totalCount,
    ).toBe(0);
    // Another role may not start one; a window backwards is refused by name.
    const refused = await sut.app.inject({
      method: 'POST',
      url: '/v1/reconciliation/runs',
      headers: bearer(app.key),
      payload: { tenantId: app.tenantId, from: today, to: today },
    });
    expect(refused.statusCode).toBe(403);
    const backwards = await sut.app.inject({
      method: 'POST',
      url: '/v1/reconciliation/runs',
      headers: bearer(operatorKey),
      payload: { tenantId: app.tenantId, from: today, to: '2020-01-01' },
    });
    expect(backwards.statusCode).toBe(400);
  }, 60_000);

  it('runs a window again once the lease of a run whose process died lapses, adopting nothing twice', async () => {
    const app = await posTenant(sut);
    const desk = await dashboard(app, '/payments', { amount: 5_100 });
    // As a process killed mid-run leaves it: its run `running`, its lease lapsed, an adoption begun.
    const dead = randomUUID();
    await query(
      `INSERT INTO reconciliation_runs (id, tenant_id, capability, window_from, window_to, trigger, status, lease_until)
       VALUES ($1, $2, 'card', $3, $3, 'on-demand', 'running', now() - interval '1 second')`,
      [dead, app.tenantId, today],
    );
    await query(
      `INSERT INTO provider_resources (id, tenant_id, kind, token, status, amount, origin)
       VALUES ($1, $2, 'payment', $3, 'creating', 5100, 'provider')`,
      [randomUUID(), app.tenantId, desk.token],
    );
    const run = await replica.app.get(ReconciliationService).run(window(app), 'on-demand');
    expect(run?.status).toBe('succeeded');
    expect(run?.counts).toMatchObject({ moved: 1, adopted: 0 });
    const [deadRun] = await query<{ status: string }>(
      'SELECT status FROM reconciliation_runs WHERE id = $1',
      [dead],
    );
    expect(deadRun.status).toBe('interrupted');
    const rows = await query<{ status: string }>(
      'SELECT status FROM provider_resources WHERE tenant_id = $1 AND token = $2',
      [app.tenantId, desk.token],
    );
    expect(rows).toEqual([{ status: 'Captured' }]);
    // While a live run holds the window, another replica does not run it.
    const [live] = await query<{ id: string }>(
      `INSERT INTO reconciliation_runs (id, tenant_id, capability, window_from, window_to, trigger, status, lease_until)
       VALUES ($1, $2, 'card', $3, $3, 'on-demand', 'running', now() + interval '1 minute') RETURNING id`,
      [randomUUID(), app.tenantId, today],
    );
    expect(await sut.app.get(ReconciliationService).run(window(app), 'on-demand')).toBeUndefined();
    await query(`UPDATE reconciliation_runs SET status = 'failed' WHERE id = $1`, [live.id]);
  }, 60_000);

  it("runs each tenant's day once on the scheduler, whichever replica, and again never", async () => {
    const app = await posTenant(sut);
    const desk = await dashboard(app, '/payments', { amount: 6_200 });
    // A turn as it happens the day after the provider's day: that day is the previous day.
    const day = await providerDay();
    const tomorrow = Date.parse(`${day}T12:00:00Z`) + 86_400_000;
    await Promise.all([
      sut.app.get(ReconciliationRuns).due(tomorrow),
      replica.app.get(ReconciliationRuns).due(tomorrow),
    ]);
    await replica.app.get(ReconciliationRuns).due(tomorrow);
    const daily = await query<{ tenant_id: string; capability: string; n: string }>(
      `SELECT tenant_id, capability, count(*) AS n FROM reconciliation_runs
        WHERE trigger = 'daily' AND window_from = $1 AND status = 'succeeded'
        GROUP BY tenant_id, capability`,
      [day],
    );
    // Each tenant's day of each list capability: card, customers, notifications, marketplace.
    expect(
      daily
        .filter((row) => row.tenant_id === app.tenantId)
        .map((row) => row.capability)
        .sort(),
    ).toEqual(['card', 'customers', 'marketplace', 'notifications']);
    expect(daily.length).toBeGreaterThanOrEqual(16);
    expect(daily.every((row) => Number(row.n) === 1)).toBe(true);
    const adopted = await query<{ origin: string }>(
      'SELECT origin FROM provider_resources WHERE tenant_id = $1 AND token = $2',
      [app.tenantId, desk.token],
    );
    expect(adopted).toEqual([{ origin: 'provider' }]);
  }, 120_000);

  it('reconciles a window from the command line (npm run cli -- reconcile)', async () => {
    const app = await posTenant(sut);
    await dashboard(app, '/payments', { amount: 7_300 });
    const [tenant] = await query<{ slug: string }>('SELECT slug FROM tenants WHERE id = $1', [
      app.tenantId,
    ]);
    const day = await providerDay();
    const out: string[] = [];
    const code = await COMMANDS.reconcile.run({
      app: sut.app,
      out: (line) => out.push(line),
      args: { positional: [tenant.slug], options: { from: day } },
    });
    expect(code).toBe(0);
    expect(out[0]).toMatch(new RegExp(`^run \\S+ of ${tenant.slug} ${day} to ${day}: succeeded`));
    expect(out).toContain('  adopted         1');
  }, 60_000);
});
