import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { approvedConsent } from '../support/consent-flow.js';
import { createBankConsent } from '../support/sandbox-api.js';
import type { PorticoClient } from '#src/client/portico-client.js';
import { consentRequest, domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

describe('the consent store, idempotency, reconciliation and the audit trail', () => {
  // A database of its own: the resolver at the restart below must find this file's rows in doubt, not
  // rows of other files (whose resolvers, in turn, would lease these).
  let database: OwnDatabase;
  let gateway: TestGateway;
  let tenant: { key: string; tenantId: string };
  let api: PorticoClient;
  beforeAll(async () => {
    database = await ownDatabase('store');
    gateway = await startTestGateway({ DATABASE_URL: database.url });
    tenant = await gateway.newTenantWithKey('app');
    api = porticoClient(gateway, tenant.key);
  });
  afterAll(async () => {
    await gateway.close();
    await database.drop();
  });

  it('replays a consent creation with the same Idempotency-Key and body, and refuses another body with 422', async () => {
    const key = randomUUID();
    const countRows = async () =>
      (
        await gateway.dataSource.query(
          `SELECT count(*)::int AS count FROM consents WHERE tenant_id = $1`,
          [tenant.tenantId],
        )
      )[0].count as number;
    const before = await countRows();
    const withKey = { header: { 'Idempotency-Key': key } };
    const first = await api.POST('/v1/consents', { params: withKey, body: consentRequest() });
    const again = await api.POST('/v1/consents', { params: withKey, body: consentRequest() });
    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(201);
    expect(again.data!.consentId).toBe(first.data!.consentId);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(await countRows()).toBe(before + 1);
    const other = await api.POST('/v1/consents', {
      params: withKey,
      body: consentRequest({ psuReference: 'someone-else' }),
    });
    expect(other.response.status).toBe(422);
  });

  it('answers 409 while the first request with a key is still running', async () => {
    const key = randomUUID();
    const pay = () =>
      api.POST('/v1/payments', {
        params: { header: { 'Idempotency-Key': key } },
        body: domesticPayment(),
      });
    // The bank holds the first initiation for a second: the other request comes while it runs.
    gateway.sandbox.chaos.add({
      operation: 'initiatePayment',
      fault: 'delay',
      delayMs: 1000,
      times: 1,
    });
    const [a, b] = await Promise.all([pay(), pay()]);
    expect([a.response.status, b.response.status].sort((x, y) => x - y)).toEqual([201, 409]);
  });

  it('completes the row of every read of a group once, and reports none as not completed', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, tenant.key);
    const notCompleted = async () =>
      await gateway.app
        .get(Metrics)
        .registry.getSingleMetricAsString('portico_access_log_not_completed_total');
    const before = await notCompleted();
    const logsBefore = gateway.logs.length;
    const read = () =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: {
          header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.1' },
          path: { accountId },
        },
      });
    // Rounds of concurrent reads: their completions ride along with the next round's admission statement.
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 12 }, read));
      expect(answers.map((answer) => answer.response.status)).toEqual(Array(12).fill(200));
    }
    await gateway.app.get(AccessLogService).flushCompletions();
    const outcomes = (await gateway.dataSource.query(
      `SELECT outcome, count(*)::int AS count FROM access_log
        WHERE consent_id = $1 AND operation = 'getAccountBalances'
        GROUP BY outcome`,
      [consentId],
    )) as { outcome: string; count: number }[];
    expect(outcomes).toEqual([{ outcome: 'ok', count: 48 }]);
    expect(await notCompleted()).toBe(before);
    expect(
      gateway.logs
        .slice(logsBefore)
        .filter((line) => line.includes('access log row not completed')),
    ).toEqual([]);
  });

  it('keeps the status history of a consent, and the audit view shows it with every access', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, tenant.key);
    const header = { 'Consent-ID': consentId };
    await api.GET('/v1/accounts', {
      params: { header: { ...header, 'PSU-IP-Address': '192.0.2.1' } },
    });
    await api.GET('/v1/accounts/{accountId}/balances', { params: { header, path: { accountId } } });
    await api.GET('/v1/accounts/{accountId}/balances', {
      params: { header, path: { accountId: 'not-covered' } },
    });
    const path = { params: { path: { consentId } } };
    expect((await api.DELETE('/v1/consents/{consentId}', path)).response.status).toBe(204);

    const app = await api.GET('/v1/audit/consents/{consentId}', path);
    expect(app.response.status).toBe(403);
    const auditor = porticoClient(gateway, (await gateway.newTenantWithKey('auditor')).key);
    const detail = await auditor.GET('/v1/audit/consents/{consentId}', path);
    expect(detail.response.status).toBe(200);
    expect(detail.data).toMatchObject({
      tenantId: tenant.tenantId,
      status: 'terminatedByTpp',
      psuReference: 'customer-4711',
    });
    expect(detail.data!.history.map((h) => `${h.from}->${h.to}:${h.cause}`)).toEqual([
      'null->creating:created',
      'creating->received:upstream-created',
      'received->valid:sca-callback',
      'valid->terminatedByTpp:deleted-by-app',
    ]);
    const accesses = [...detail.data!.accessLog].reverse();
    expect(accesses.map((a) => [a.operation, a.psuPresent, a.upstreamStatus, a.outcome])).toEqual(
      expect.arrayContaining([
        ['listAccounts', true, 200, 'ok'],
        ['getAccountBalances', false, 200, 'ok'],
        ['getAccountBalances', false, null, 'refused:RESOURCE_UNKNOWN'],
      ]),
    );

    const page = await auditor.GET('/v1/audit/consents', {
      params: { query: { tenantId: tenant.tenantId, status: 'terminatedByTpp', pageSize: 5 } },
    });
    expect(page.data!.items.map((i) => i.consentId)).toContain(consentId);
    const none = await auditor.GET('/v1/audit/consents', {
      params: { query: { tenantId: tenant.tenantId, brandId: 'vistula-bank' } },
    });
    expect(none.data!.totalCount).toBe(0);
  });

  it('refuses to change or delete the history: it is append-only in the database', async () => {
    await expect(
      gateway.dataSource.query(
        `UPDATE status_changes SET cause = 'edited' WHERE id = (SELECT min(id) FROM status_changes)`,
      ),
    ).rejects.toThrow(/append-only/);
    await expect(
      gateway.dataSource.query(
        `DELETE FROM access_log WHERE id = (SELECT min(id) FROM access_log)`,
      ),
    ).rejects.toThrow(/append-only/);
  });

  it('resolves half-written consents at start: one the bank has is brought up to date, one it never confirmed fails once its lifetime or its SCA window has passed, one within both stays unknown', async () => {
    // A consent the bank created, whose row a crash left at `creating` (upstream id written, status not).
    const tpp = transportTo(gateway.sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    const upstream = await createBankConsent(tpp);
    await tpp.close();
    const known = randomUUID();
    const unknown = randomUUID();
    // Never confirmed, past its SCA window but not its lifetime; and one still within both.
    const unauthorisable = randomUUID();
    const young = randomUUID();
    for (const [id, upstreamId, age] of [
      [known, upstream.body?.consentId as string, '1 minute'],
      [unknown, null, '3 minutes'],
      [unauthorisable, null, '90 seconds'],
      [young, null, '40 seconds'],
    ] as const) {
      await gateway.dataSource.query(
        `INSERT INTO consents (id, tenant_id, kind, brand_id, upstream_consent_id, requested_access, status, redirect_uri, created_at) VALUES ($1, $2, 'ais', 'danube-bank', $3, '{}', 'creating', 'https://app.example/r', now() - $4::interval)`,
        [id, tenant.tenantId, upstreamId, age],
      );
    }
    // A restart: a new gateway on the same database, talking to the same sandbox.
    const restarted = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_OB_BASE_URL: gateway.sandbox.openBankingUrl,
      RECONCILE_ON_START: 'true',
      RESOLVER_GIVE_UP_AFTER_MS: '150000',
      RESOLVER_CONSENT_SCA_WINDOW_MS: '60000',
    });
    await restarted.app.get(Scheduler).runNow('resolver'); // waits for the pass at start, or makes one
    try {
      const statuses = await gateway.dataSource.query(
        `SELECT id, status FROM consents WHERE id = ANY($1)`,
        [[known, unknown, unauthorisable, young]],
      );
      expect(
        Object.fromEntries(
          statuses.map((row: { id: string; status: string }) => [row.id, row.status]),
        ),
      ).toEqual({
        [known]: 'received',
        [unknown]: 'failed',
        [unauthorisable]: 'failed',
        [young]: 'unknown',
      });
      const causes = await gateway.dataSource.query(
        `SELECT subject_id, cause FROM status_changes WHERE subject_id = ANY($1)`,
        [[known, unknown, unauthorisable, young]],
      );
      expect(
        Object.fromEntries(
          causes.map((row: { subject_id: string; cause: string }) => [row.subject_id, row.cause]),
        ),
      ).toEqual({
        [known]: 'resolver',
        [unknown]: 'resolver:lifetime-passed',
        [unauthorisable]: 'resolver:sca-window-passed',
        [young]: 'resolver:answer-never-recorded',
      });
    } finally {
      await restarted.close();
    }
  });
});
