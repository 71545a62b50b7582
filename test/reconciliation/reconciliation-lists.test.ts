import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { ReconciliationCapability } from '#src/reconciliation/reconciliation.entities.js';
import { ReconciliationService } from '#src/reconciliation/reconciliation.service.js';
import { ibanOf, sellerForm } from '../support/marketplace.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posTenant, type PosTenant } from '../support/pos-gateway.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CARD = {
  cardNumber: '4556390755719395',
  expirationMonth: '12',
  expirationYear: String(new Date().getUTCFullYear() + 3),
  holderName: 'Grace Hopper',
};
const DASHBOARD_CARD = {
  card_number: CARD.cardNumber,
  expiration_month: CARD.expirationMonth,
  expiration_year: CARD.expirationYear,
  holder_name: 'Dashboard Customer',
};
const NOTIFICATION = {
  payeeName: 'Eleni Georgiou',
  payeeEmail: 'eleni@example.com',
  payeePhone: '+306900000001',
  amount: 2500,
  description: 'Invoice 42',
  skipNotify: 1,
};

/**
 * Reconciliation of the provider's other lists (customers, hosted payment links, the marketplace's
 * sellers, transfers, reversals and payouts) through the one engine the card payments use: each class
 * made at the sandbox's dashboard or in Portico's records, run by two replicas on one window, found,
 * settled, adopted or flagged exactly once.
 */
describe("reconciliation of the provider's other lists", () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let replica: TestGateway;
  let auditorKey: string;
  let operatorKey: string;

  beforeAll(async () => {
    database = await ownDatabase('recon_lists');
    sut = await startTestGateway({ DATABASE_URL: database.url });
    // The replica's runs are slower than the upstream deadline (2 calls a second, 1 s for a call):
    // an operator's run over HTTP, one facade request, must give each call a deadline of its own.
    replica = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_CARD_BASE_URL: sut.sandbox.cardUrl,
      UPSTREAM_DEADLINE_MS: '1000',
      RECONCILIATION_REQUESTS_PER_SECOND: '2',
    });
    auditorKey = (await sut.newTenantWithKey('auditor')).key;
    operatorKey = (await sut.newTenantWithKey('operator')).key;
  }, 120_000);
  afterAll(async () => {
    await replica?.close();
    await sut?.close();
    await database?.drop();
  });

  const call = async (app: PosTenant, url: string, payload: Json) => {
    const response = await sut.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(app.key), 'idempotency-key': randomUUID() },
      payload,
    });
    expect(response.statusCode === 201 ? 201 : response.body).toBe(201);
    return response.json<Json>();
  };
  const control = async (path: string, body: Json) => {
    const response = await request(`${sut.sandbox.scaUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.body.json()) as Json;
    expect([response.statusCode, answer]).toEqual([200, expect.anything()]);
    return answer;
  };
  /** A write made in the merchant's dashboard at the provider, outside Portico. */
  const dashboard = (app: PosTenant, operationId: string, body: Json, params: Json = {}) =>
    control(`/sandbox/card/merchants/${app.merchantId}/dashboard/operations/${operationId}`, {
      params,
      body,
    });
  const query = <T = Json>(sql: string, params: unknown[]) =>
    sut.dataSource.query(sql, params) as Promise<T[]>;
  const providerDay = async () => {
    const clock = await request(`${sut.sandbox.scaUrl}/sandbox/card/clock`);
    return ((await clock.body.json()) as { now: string }).now.slice(0, 10);
  };
  /** A row of Portico's that the provider never made. */
  const phantom = (app: PosTenant, kind: string, prefix: string, status: string, amount: number) =>
    query(
      `INSERT INTO provider_resources (id, tenant_id, kind, token, status, amount, data)
       VALUES ($1, $2, $3, $4, $5, $6, '{}')`,
      [randomUUID(), app.tenantId, kind, `${prefix}_${randomUUID().slice(0, 8)}`, status, amount],
    );

  /**
   * Runs the window on both replicas at once, then once more: answers the classes counted over all
   * three runs, the last run's counts, and the tenant's drifts (from the auditor's list).
   */
  const reconcileTwice = async (
    app: PosTenant,
    capability: ReconciliationCapability,
    from: string,
    to: string,
  ) => {
    const window = { tenantId: app.tenantId, capability, from, to };
    const runs = await Promise.all([
      sut.app.get(ReconciliationService).run(window, 'on-demand'),
      replica.app.get(ReconciliationService).run(window, 'on-demand'),
    ]);
    const again = (await replica.app.get(ReconciliationService).run(window, 'on-demand'))!;
    const all = [...runs.filter((run) => run !== undefined), again];
    expect(all.map((run) => run.status)).toEqual(all.map(() => 'succeeded'));
    const total = (name: string) =>
      all.reduce((sum, run) => sum + ((run.counts as Record<string, number>)[name] ?? 0), 0);
    const drifts = await sut.app.inject({
      method: 'GET',
      url: `/v1/audit/reconciliation/drifts?tenantId=${app.tenantId}`,
      headers: bearer(auditorKey),
    });
    const items = drifts.json<{ items: Json[] }>().items;
    const causes = await query<{ token: string; cause: string; to_status: string }>(
      `SELECT r.token, c.cause, c.to_status FROM status_changes c
         JOIN provider_resources r ON r.id = c.subject_id
        WHERE r.tenant_id = $1 AND c.cause IN ('reconciled', 'found-at-provider')
        ORDER BY r.token, c.id::bigint`,
      [app.tenantId],
    );
    const events = await query<{ type: string; n: string }>(
      `SELECT type, count(*) AS n FROM webhook_events
        WHERE tenant_id = $1 AND type = 'reconciliation.drift' GROUP BY type`,
      [app.tenantId],
    );
    return {
      total,
      again: again.counts as Record<string, number>,
      drifts: Object.fromEntries(items.map((drift) => [`${drift.kind}:${drift.class}`, drift])),
      driftEvents: Number(events[0]?.n ?? 0),
      causes: Object.fromEntries(causes.map((row) => [row.token, `${row.cause}:${row.to_status}`])),
    };
  };

  it('customers: deleted in the dashboard, made there, deleted only at Portico, never made', async () => {
    const app = await posTenant(sut);
    const day = await providerDay();
    const matched = await call(app, '/v1/card/customers', { ...CARD, fullName: 'Ada' });
    const deleted = await call(app, '/v1/card/customers', { ...CARD, fullName: 'Bea' });
    const ahead = await call(app, '/v1/card/customers', { ...CARD, fullName: 'Cleo' });
    await dashboard(app, 'deleteCustomer', {}, { customerId: deleted.token });
    const desk = await dashboard(app, 'createCustomer', { ...DASHBOARD_CARD, full_name: 'Desk' });
    await query(`UPDATE provider_resources SET status = 'deleted' WHERE token = $1`, [ahead.token]);
    await phantom(app, 'customer', 'cus', 'active', 0);

    const found = await reconcileTwice(app, 'customers', day, day);
    expect([found.total('moved'), found.total('adopted')]).toEqual([1, 1]);
    expect(found.again).toMatchObject({ matched: 3, moved: 0, adopted: 0 });
    expect(found.causes).toEqual({
      [deleted.token]: 'reconciled:deleted',
      [desk.token]: 'found-at-provider:active',
    });
    expect(Object.keys(found.drifts).sort()).toEqual([
      'customer:portico-ahead',
      'customer:portico-only',
    ]);
    expect(found.drifts['customer:portico-ahead']).toMatchObject({
      token: ahead.token,
      portico: { status: 'deleted' },
      provider: { status: 'active' },
    });
    expect(found.driftEvents).toBe(2);
    expect(matched.token).toMatch(/^cus_/);
  }, 60_000);

  it('hosted payment links: cancelled and made in the dashboard, an amount and a status that differ', async () => {
    const app = await posTenant(sut);
    const day = await providerDay();
    const matched = await call(app, '/v1/card/notifications', NOTIFICATION);
    const cancelled = await call(app, '/v1/card/notifications', NOTIFICATION);
    const corrected = await call(app, '/v1/card/notifications', NOTIFICATION);
    const ahead = await call(app, '/v1/card/notifications', NOTIFICATION);
    await dashboard(app, 'cancelNotification', {}, { notificationId: cancelled.token });
    const desk = await dashboard(app, 'createNotification', {
      payee_name: 'Desk Payee',
      payee_email: 'desk@example.com',
      payee_phone: '+306900000002',
      amount: 1_800,
      description: 'Made in the dashboard',
      skip_notify: 1,
    });
    await query(`UPDATE provider_resources SET amount = 2600 WHERE token = $1`, [corrected.token]);
    await query(`UPDATE provider_resources SET status = 'Paid' WHERE token = $1`, [ahead.token]);
    await phantom(app, 'notification', 'pnt', 'Pending', 900);

    const found = await reconcileTwice(app, 'notifications', day, day);
    expect([found.total('moved'), found.total('adopted')]).toEqual([1, 1]);
    expect(found.again).toMatchObject({ matched: 3, moved: 0, adopted: 0 });
    expect(found.causes).toEqual({
      [cancelled.token]: 'reconciled:Canceled',
      [desk.token]: 'found-at-provider:Pending',
    });
    expect(found.drifts['notification:amount-differs']).toMatchObject({
      token: corrected.token,
      portico: { amount: 2600 },
      provider: { amount: 2500 },
    });
    expect(found.drifts['notification:portico-ahead']).toMatchObject({
      token: ahead.token,
      portico: { status: 'Paid' },
      provider: { status: 'Pending' },
    });
    expect(found.drifts['notification:portico-only']).toMatchObject({ provider: null });
    expect(found.driftEvents).toBe(3);
    expect(matched.status).toBe('Pending');
  }, 60_000);

  it('the marketplace: a seller suspended and one made in the dashboard, transfers, a reversal and payouts made there', async () => {
    const app = await posTenant(sut);
    const day = await providerDay();
    const seller = (n: number) =>
      call(app, '/v1/marketplace/sellers', {
        email: `seller${n}@shop.example`,
        contactPhone: '+306900000000',
        description: `Seller ${n}`,
        business: {
          name: `Business ${n}`,
          title: `Business ${n} S.A.`,
          taxNumber: `EL${300000000 + n}`,
          address: 'Ermou 12, Athens',
        },
        bankAccount: {
          iban: ibanOf('GR', `0110125${String(n).padStart(16, '0')}`),
          beneficiaryName: `Business ${n}`,
        },
      });
    const kept = await seller(1);
    const suspended = await seller(2);
    await control(`/sandbox/card/marketplace/sellers/${suspended.token}/status`, {
      status: 'Suspended',
    });
    const deskSeller = await dashboard(app, 'createSeller', sellerForm(903));
    const payment = await call(app, '/v1/card/payments', {
      ...CARD,
      cvv: '123',
      amount: 10_000,
      split: 1,
    });
    const transfer = await call(app, `/v1/marketplace/payments/${payment.token}/transfers`, {
      description: 'Order share',
      seller: kept.token,
      amount: 4_000,
      commissionAmount: 200,
    });
    const corrected = await call(app, `/v1/marketplace/payments/${payment.token}/transfers`, {
      description: 'Order share',
      seller: kept.token,
      amount: 1_000,
      commissionAmount: 50,
    });
    await query(`UPDATE provider_resources SET amount = 1100 WHERE token = $1`, [corrected.token]);
    const deskTransfer = await dashboard(
      app,
      'createPaymentTransfer',
      {
        seller: deskSeller.token,
        amount: 2_000,
        commission_amount: 100,
        description: 'Desk share',
      },
      { paymentId: payment.token },
    );
    // Part of Portico's transfer reversed in the dashboard: the reversal adopted, the transfer moved.
    const deskReversal = await dashboard(app, 'createReversal', {
      transfer: transfer.token,
      amount: 500,
    });

    const found = await reconcileTwice(app, 'marketplace', day, day);
    expect(found.causes).toMatchObject({
      [suspended.token]: 'reconciled:Suspended',
      [deskSeller.token]: 'found-at-provider:Authorized',
      [deskTransfer.token]: `found-at-provider:${deskTransfer.payout ? 'paid_out' : 'pending'}`,
      [deskReversal.token]: 'found-at-provider:pending',
    });
    const [reversed] = await query<{ data: Json }>(
      'SELECT data FROM provider_resources WHERE token = $1',
      [transfer.token],
    );
    expect(reversed.data.reversed_amount).toBe(500);
    expect(found.total('moved')).toBe(2);
    expect(found.total('adopted')).toBe(3);
    expect(found.again).toMatchObject({ moved: 0, adopted: 0, matched: 6 });
    expect(Object.keys(found.drifts)).toEqual(['transfer:amount-differs']);
    expect(found.drifts['transfer:amount-differs']).toMatchObject({
      token: corrected.token,
      portico: { amount: 1_100 },
      provider: { amount: 1_000 },
    });

    // The provider's payout run pays the sellers out: each payout adopted (Portico never makes one).
    const ran = await control('/sandbox/card/marketplace/payouts/run', {
      merchantId: app.merchantId,
    });
    const paidDay = await providerDay();
    const payouts = await reconcileTwice(app, 'marketplace', day, paidDay);
    const created = ran.created as string[];
    expect(created.length).toBeGreaterThan(0);
    expect(payouts.total('adopted')).toBe(created.length);
    for (const token of created) expect(payouts.causes[token]).toBe('found-at-provider:Pending');
    // Deposited by a later run: each payout moved, as the bank's deposit reaches the app.
    const next = new Date(Date.parse(`${paidDay}T00:00:00Z`) + 86_400_000).toISOString();
    const deposits = await control('/sandbox/card/marketplace/payouts/run', {
      merchantId: app.merchantId,
      date: next.slice(0, 10),
    });
    expect(deposits.deposited).toEqual(expect.arrayContaining(created));
    const deposited = await reconcileTwice(app, 'marketplace', day, paidDay);
    expect(deposited.total('moved')).toBe(created.length);
    for (const token of created) expect(deposited.causes[token]).toBe('reconciled:Deposited');
  }, 120_000);

  it("runs an operator's window over HTTP for longer than one request's upstream deadline", async () => {
    const app = await posTenant(sut);
    const day = await providerDay();
    await dashboard(app, 'createSeller', sellerForm(904));
    const response = await replica.app.inject({
      method: 'POST',
      url: '/v1/reconciliation/runs',
      headers: bearer(operatorKey),
      payload: { tenantId: app.tenantId, from: day, to: day, capability: 'marketplace' },
    });
    expect(response.json()).toMatchObject({
      status: 'succeeded',
      capability: 'marketplace',
      counts: { adopted: 1 },
      // Four lists at two calls a second: past the 1 s the request's calls would share.
      requests: 4,
    });
  }, 60_000);
});
