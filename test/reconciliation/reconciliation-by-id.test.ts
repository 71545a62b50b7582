import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { ReconciliationCapability } from '#src/reconciliation/reconciliation.entities.js';
import { ReconciliationService } from '#src/reconciliation/reconciliation.service.js';
import { consentRequest, domesticPayment } from '../support/fixtures.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { runProcess } from '../support/processes.js';
import { posCall, posTenant, terminals, type PosTenant } from '../support/pos-gateway.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Reconciliation of what the provider has no list of (Berlin Group's consents and payments, POS
 * transactions), read by id: each class made at the sandbox's bank or POS provider (outside Portico,
 * through the control port) or in Portico's records,
 * run by two replicas on one window, found, settled or flagged exactly once; nothing adopted.
 */
describe('reconciliation by id (open banking, POS)', () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let replica: TestGateway;
  let auditorKey: string;

  beforeAll(async () => {
    database = await ownDatabase('recon_by_id');
    sut = await startTestGateway({ DATABASE_URL: database.url });
    replica = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_OB_BASE_URL: sut.sandbox.openBankingUrl,
      UPSTREAM_POS_BASE_URL: sut.sandbox.posUrl,
    });
    auditorKey = (await sut.newTenantWithKey('auditor')).key;
  }, 120_000);
  afterAll(async () => {
    await replica?.close();
    await sut?.close();
    await database?.drop();
  });

  /** A POS payment at the terminal, answered 200: its transaction id. */
  const posPayment = async (app: PosTenant, terminal: string, amount: number) => {
    const transactionId = randomUUID();
    const response = await posCall(sut, app, 'POST', '/v1/pos/transactions', {
      transactionId,
      amount,
      currency: 'EUR',
      type: 'payment',
      terminal,
    });
    expect(response.statusCode === 200 ? 200 : response.body).toBe(200);
    return transactionId;
  };

  const query = <T = Json>(sql: string, params: unknown[]) =>
    sut.dataSource.query(sql, params) as Promise<T[]>;
  const create = async (key: string, url: string, payload: object) => {
    const response = await sut.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(key), 'idempotency-key': randomUUID() },
      payload,
    });
    expect(response.statusCode === 201 ? 201 : response.body).toBe(201);
    return response.json<Json>();
  };
  /** The bank acts outside Portico (the sandbox's control port): its back office, or it forgets. */
  const atBank = async (method: 'PATCH' | 'DELETE', path: string, body?: Json) => {
    const response = await request(`${sut.sandbox.scaUrl}${path}`, {
      method,
      ...(body
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
    await response.body.dump();
    expect(response.statusCode).toBe(204);
  };

  /** Both replicas run the window at once, then one runs it again (as in the list tests). */
  const reconcileTwice = async (tenantId: string, capability: ReconciliationCapability) => {
    const day = new Date().toISOString().slice(0, 10);
    const window = { tenantId, capability, from: day, to: day };
    const runs = await Promise.all([
      sut.app.get(ReconciliationService).run(window, 'on-demand'),
      replica.app.get(ReconciliationService).run(window, 'on-demand'),
    ]);
    const again = (await replica.app.get(ReconciliationService).run(window, 'on-demand'))!;
    const all = [...runs.filter((run) => run !== undefined), again];
    expect(all.map((run) => run.error ?? run.status)).toEqual(all.map(() => 'succeeded'));
    const total = (name: string) =>
      all.reduce((sum, run) => sum + ((run.counts as Record<string, number>)[name] ?? 0), 0);
    const drifts = await sut.app.inject({
      method: 'GET',
      url: `/v1/audit/reconciliation/drifts?tenantId=${tenantId}`,
      headers: bearer(auditorKey),
    });
    const items = drifts.json<{ items: Json[] }>().items;
    const moves = await query<{ subject_id: string; to_status: string }>(
      `SELECT subject_id, to_status FROM status_changes WHERE cause = 'reconciled'
          AND subject_id IN (SELECT id FROM payments WHERE tenant_id = $1
                             UNION SELECT id FROM consents WHERE tenant_id = $1
                             UNION SELECT id FROM provider_resources WHERE tenant_id = $1)`,
      [tenantId],
    );
    const events = await query<{ type: string; n: string }>(
      `SELECT type, count(*) AS n FROM webhook_events
        WHERE tenant_id = $1 AND (type = 'reconciliation.drift' OR body LIKE '%"cause":"reconciled"%')
        GROUP BY type ORDER BY type`,
      [tenantId],
    );
    return {
      total,
      again: again.counts as Record<string, number>,
      drifts: Object.fromEntries(items.map((drift) => [`${drift.kind}:${drift.class}`, drift])),
      moves: Object.fromEntries(moves.map((row) => [row.subject_id, row.to_status])),
      events: Object.fromEntries(events.map((row) => [row.type, Number(row.n)])),
    };
  };

  it('consents and payments: moved at the bank, an amount corrected, ahead, forgotten', async () => {
    const { tenantId, key } = await sut.newTenantWithKey('app');
    const payment = () => create(key, '/v1/payments', domesticPayment());
    const consent = () => create(key, '/v1/consents', consentRequest());
    const [matched, settled, corrected, ahead, forgotten, final] = [
      await payment(),
      await payment(),
      await payment(),
      await payment(),
      await payment(),
      await payment(),
    ];
    const [inStep, rejected, consentAhead, consentForgotten] = [
      await consent(),
      await consent(),
      await consent(),
      await consent(),
    ];
    const bankIds = Object.fromEntries(
      (
        await query<{ id: string; bank: string }>(
          `SELECT id, upstream_payment_id AS bank FROM payments WHERE tenant_id = $1
            UNION SELECT id, upstream_consent_id FROM consents WHERE tenant_id = $1`,
          [tenantId],
        )
      ).map((row) => [row.id, row.bank]),
    );
    const bankPayment = (made: Json) => `/sandbox/payments/${bankIds[made.paymentId]}`;
    const bankConsent = (made: Json) => `/sandbox/consents/${bankIds[made.consentId]}`;
    await atBank('PATCH', bankPayment(settled), { status: 'ACSC' });
    await atBank('PATCH', bankPayment(corrected), { amount: '14000.00' });
    await atBank('DELETE', bankPayment(forgotten));
    await atBank('PATCH', bankPayment(final), { status: 'ACSC' });
    await query(`UPDATE payments SET status = 'ACTC' WHERE id = $1`, [ahead.paymentId]);
    await query(`UPDATE payments SET status = 'ACSC' WHERE id = $1`, [final.paymentId]);
    await atBank('PATCH', bankConsent(rejected), { status: 'rejected' });
    await atBank('DELETE', bankConsent(consentForgotten));
    await query(`UPDATE consents SET status = 'valid' WHERE id = $1`, [consentAhead.consentId]);

    const found = await reconcileTwice(tenantId, 'open-banking');
    expect([found.total('moved'), found.total('adopted')]).toEqual([2, 0]);
    expect(found.moves).toEqual({
      [settled.paymentId]: 'ACSC',
      [rejected.consentId]: 'rejected',
    });
    // The third run: in step now (the final ones, settled and rejected, in the sample of final rows).
    expect(found.again).toMatchObject({ matched: 5, moved: 0, adopted: 0 });
    expect(Object.keys(found.drifts).sort()).toEqual([
      'consent:portico-ahead',
      'consent:portico-only',
      'payment:amount-differs',
      'payment:portico-ahead',
      'payment:portico-only',
    ]);
    expect(found.drifts['payment:amount-differs']).toMatchObject({
      porticoId: corrected.paymentId,
      portico: { status: 'RCVD', amount: '15000.00', currency: 'HUF' },
      provider: { status: 'RCVD', amount: '14000.00', currency: 'HUF' },
    });
    expect(found.drifts['payment:portico-ahead']).toMatchObject({
      porticoId: ahead.paymentId,
      portico: { status: 'ACTC' },
      provider: { status: 'RCVD' },
    });
    expect(found.drifts['payment:portico-only']).toMatchObject({
      porticoId: forgotten.paymentId,
      provider: null,
    });
    expect(found.drifts['consent:portico-ahead']).toMatchObject({
      porticoId: consentAhead.consentId,
      portico: { status: 'valid' },
      provider: { status: 'received' },
    });
    expect(found.drifts['consent:portico-only']).toMatchObject({
      porticoId: consentForgotten.consentId,
      provider: null,
    });
    expect(found.events).toEqual({
      'consent.status_changed': 1,
      'payment.status_changed': 1,
      'reconciliation.drift': 5,
    });
    // Flagged, never overwritten: Portico's rows are as they were.
    const [row] = await query<{ status: string; amount: string }>(
      `SELECT status, details->'instructedAmount'->>'amount' AS amount FROM payments WHERE id = $1`,
      [corrected.paymentId],
    );
    expect(row).toEqual({ status: 'RCVD', amount: '15000.00' });
    expect([matched.paymentId, inStep.consentId]).toHaveLength(2);
  }, 90_000);

  it('POS transactions: settled from doubt, an amount corrected, failed at the provider, lost', async () => {
    const app = await posTenant(sut);
    const [terminal] = terminals(sut, app);
    const pay = () => posPayment(app, terminal.token, 1240);
    const [matched, inDoubt, corrected, failed, lost] = [
      await pay(),
      await pay(),
      await pay(),
      await pay(),
      await pay(),
    ];
    const atProvider = async (method: 'PATCH' | 'DELETE', id: string, body?: Json) => {
      const response = await request(`${sut.sandbox.scaUrl}/sandbox/pos/transactions/${id}`, {
        method,
        ...(body
          ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
          : {}),
      });
      await response.body.dump();
      expect(response.statusCode).toBe(204);
    };
    // An answer Portico lost: the row in doubt, its outcome at the provider.
    await query(`UPDATE provider_resources SET status = 'unknown' WHERE token = $1`, [inDoubt]);
    await atProvider('PATCH', corrected, { amount: 1300 });
    await atProvider('PATCH', failed, { status: 'FAILED' });
    await atProvider('DELETE', lost);
    const rowId = async (token: string) =>
      (
        await query<{ id: string }>('SELECT id FROM provider_resources WHERE token = $1', [token])
      )[0].id;

    const found = await reconcileTwice(app.tenantId, 'pos');
    expect([found.total('moved'), found.total('adopted')]).toEqual([1, 0]);
    expect(found.moves).toEqual({ [await rowId(inDoubt)]: 'CAPTURED' });
    expect(found.again).toMatchObject({ matched: 2, moved: 0, adopted: 0 });
    expect(Object.keys(found.drifts).sort()).toEqual([
      'pos_payment:amount-differs',
      'pos_payment:portico-ahead',
      'pos_payment:portico-only',
    ]);
    expect(found.drifts['pos_payment:amount-differs']).toMatchObject({
      token: corrected,
      portico: { status: 'CAPTURED', amount: 1240 },
      provider: { status: 'CAPTURED', amount: 1300 },
    });
    expect(found.drifts['pos_payment:portico-ahead']).toMatchObject({
      token: failed,
      portico: { status: 'CAPTURED' },
      provider: { status: 'FAILED' },
    });
    expect(found.drifts['pos_payment:portico-only']).toMatchObject({ token: lost, provider: null });
    expect(found.events).toEqual({
      'pos_transaction.status_changed': 1,
      'reconciliation.drift': 3,
    });
    expect(matched).not.toBe(inDoubt);
  }, 90_000);

  /**
   * `npm run cli -- reconcile` of today: a process of its own with the gateway's configuration, no
   * provider address, the sandbox's ports and development certificates (as `npm start` beside it had).
   */
  const reconcileByCli = async (slug: string, capability: ReconciliationCapability) => {
    const day = new Date().toISOString().slice(0, 10);
    const cli = await runProcess(
      'dist/cli/main.js',
      ['reconcile', slug, '--from', day, '--capability', capability],
      {
        DATABASE_URL: database.url,
        SANDBOX_OB_PORT: new URL(sut.sandbox.openBankingUrl).port,
        SANDBOX_POS_PORT: new URL(sut.sandbox.posUrl).port,
        SANDBOX_CERTS_DIR: sut.config.sandbox.certsDir,
      },
    );
    expect([cli.code, cli.stderr]).toEqual([0, '']);
    expect(cli.stdout).toMatch(new RegExp(`^run \\S+ of ${slug} ${day} to ${day}: succeeded`));
    return cli;
  };

  it("reconciles open banking from the command line, at the bank and with the QWAC of the gateway's configuration", async () => {
    const { tenantId, slug, key } = await sut.newTenantWithKey('app');
    const settled = await create(key, '/v1/payments', domesticPayment());
    const forgotten = await create(key, '/v1/consents', consentRequest());
    const [payment] = await query<{ bank: string }>(
      'SELECT upstream_payment_id AS bank FROM payments WHERE id = $1',
      [settled.paymentId],
    );
    const [consent] = await query<{ bank: string }>(
      'SELECT upstream_consent_id AS bank FROM consents WHERE id = $1',
      [forgotten.consentId],
    );
    await atBank('PATCH', `/sandbox/payments/${payment.bank}`, { status: 'ACSC' });
    await atBank('DELETE', `/sandbox/consents/${consent.bank}`);

    const cli = await reconcileByCli(slug, 'open-banking');
    expect(cli.stdout).toContain('  moved           1');
    expect(cli.stdout).toContain('  portico-only    1');
    const moves = await query<{ to_status: string }>(
      "SELECT to_status FROM status_changes WHERE cause = 'reconciled' AND subject_id = $1",
      [settled.paymentId],
    );
    expect(moves).toEqual([{ to_status: 'ACSC' }]);
    const drifts = await query<{ class: string; resource_id: string }>(
      'SELECT class, resource_id FROM reconciliation_drifts WHERE tenant_id = $1',
      [tenantId],
    );
    expect(drifts).toEqual([{ class: 'portico-only', resource_id: forgotten.consentId }]);
  }, 90_000);

  it("reconciles POS from the command line, at the POS provider of the gateway's configuration", async () => {
    const app = await posTenant(sut);
    const [terminal] = terminals(sut, app);
    const pay = () => posPayment(app, terminal.token, 990);
    const inDoubt = await pay();
    const failed = await pay();
    await query(`UPDATE provider_resources SET status = 'unknown' WHERE token = $1`, [inDoubt]);
    const response = await request(`${sut.sandbox.scaUrl}/sandbox/pos/transactions/${failed}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'FAILED' }),
    });
    await response.body.dump();
    expect(response.statusCode).toBe(204);
    const [tenant] = await query<{ slug: string }>('SELECT slug FROM tenants WHERE id = $1', [
      app.tenantId,
    ]);

    const cli = await reconcileByCli(tenant.slug, 'pos');
    expect(cli.stdout).toContain('  moved           1');
    expect(cli.stdout).toContain('  portico-ahead   1');
    const [row] = await query<{ status: string }>(
      'SELECT status FROM provider_resources WHERE token = $1',
      [inDoubt],
    );
    expect(row).toEqual({ status: 'CAPTURED' });
  }, 90_000);

  it('holds its lease through a batch of reads longer than the lease: another replica does not take the window over', async () => {
    // Reads at 4 a second: a batch of 20 takes 5 s, the lease is 2 s.
    const slow = {
      DATABASE_URL: database.url,
      UPSTREAM_OB_BASE_URL: sut.sandbox.openBankingUrl,
      RECONCILIATION_LEASE_MS: '2000',
      RECONCILIATION_REQUESTS_PER_SECOND: '4',
    };
    const [first, second] = [await startTestGateway(slow), await startTestGateway(slow)];
    try {
      const { tenantId, key } = await sut.newTenantWithKey('app');
      const made: Json[] = [];
      for (let n = 0; n < 25; n++) made.push(await create(key, '/v1/payments', domesticPayment()));
      const banks = await query<{ bank: string }>(
        'SELECT upstream_payment_id AS bank FROM payments WHERE tenant_id = $1',
        [tenantId],
      );
      for (const { bank } of banks)
        await atBank('PATCH', `/sandbox/payments/${bank}`, { status: 'ACSC' });
      const day = new Date().toISOString().slice(0, 10);
      const window = { tenantId, capability: 'open-banking' as const, from: day, to: day };
      const moved = async () =>
        Number(
          (
            await query<{ n: string }>(
              `SELECT count(*) AS n FROM status_changes WHERE cause = 'reconciled'
                AND subject_id IN (SELECT id FROM payments WHERE tenant_id = $1)`,
              [tenantId],
            )
          )[0].n,
        );
      const running = first.app.get(ReconciliationService).run(window, 'on-demand');
      // Three seconds into the first batch (12 reads at 4 a second): past the lease taken at the start.
      for (const end = Date.now() + 30_000; (await moved()) < 12;)
        if (Date.now() > end) throw new Error('the first run does not move');
      const taken = await second.app.get(ReconciliationService).run(window, 'on-demand');
      expect(taken).toBeUndefined();
      const done = (await running)!;
      expect([done.status, (done.counts as Record<string, number>).moved]).toEqual([
        'succeeded',
        25,
      ]);
      expect(made).toHaveLength(25);
    } finally {
      await second.close();
      await first.close();
    }
  }, 120_000);
});
