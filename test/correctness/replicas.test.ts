import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { PorticoClient } from '#src/client/portico-client.js';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { eventually } from '../support/chaos.js';
import { approvedConsent } from '../support/consent-flow.js';
import { domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// Two replicas (two gateways, each with its own pools, caches and revocation listener) on one database
// and one bank act as one: the shared state lives in PostgreSQL. The resolver of writes in doubt across
// two replicas is shown in resolver.test.ts.
describe('two replicas on one database', () => {
  let first: TestGateway;
  let second: TestGateway;
  const env = {
    RATE_LIMIT_PER_MINUTE: '8',
    // Long enough that only the revocation notice can stop a key within the test (see the TTL test).
    KEY_CACHE_TTL_MS: '60000',
  };
  beforeAll(async () => {
    first = await startTestGateway(env);
    second = await startTestGateway({
      ...env,
      UPSTREAM_OB_BASE_URL: first.sandbox.openBankingUrl,
    });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  const both = (key: string): [PorticoClient, PorticoClient] => [
    porticoClient(first, key),
    porticoClient(second, key),
  ];

  /** Waits, when the minute's window is about to roll over, for the next one (the count restarts there). */
  async function freshWindow(api: PorticoClient): Promise<number> {
    const probe = await api.GET('/v1/me');
    const reset = Number(probe.response.headers.get('ratelimit-reset'));
    if (reset > 15) return Number(probe.response.headers.get('ratelimit-remaining'));
    await new Promise((done) => setTimeout(done, (reset + 1) * 1000));
    return freshWindow(api);
  }

  it('shares one rate limit: a key refused on one replica after requests on the other', async () => {
    const { key } = await first.newTenantWithKey('app');
    const [a, b] = both(key);
    let remaining = await freshWindow(a);
    const seen: number[] = [];
    for (let i = 0; remaining > 0; i++) {
      const answer = await (i % 2 ? a : b).GET('/v1/me');
      expect(answer.response.status).toBe(200);
      remaining = Number(answer.response.headers.get('ratelimit-remaining'));
      seen.push(remaining);
    }
    expect(seen).toEqual([...seen].sort((x, y) => y - x));
    expect(new Set(seen).size).toBe(seen.length);
    const refused = [await a.GET('/v1/me'), await b.GET('/v1/me')];
    expect(refused.map((r) => r.response.status)).toEqual([429, 429]);
  });

  it('counts concurrent requests of one key exactly when they are counted together, on both replicas', async () => {
    const { key } = await first.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(first, key);
    const [a, b] = both(key);
    const remaining = await freshWindow(a);
    const reads = await Promise.all(
      Array.from({ length: remaining + 6 }, (_, i) =>
        (i % 2 ? a : b).GET('/v1/accounts/{accountId}/balances', {
          params: {
            path: { accountId },
            header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.7' },
          },
        }),
      ),
    );
    const served = reads.filter((r) => r.response.status === 200);
    expect(served).toHaveLength(remaining);
    expect(reads.filter((r) => r.response.status === 429)).toHaveLength(6);
    // Each served request saw its own place in the window.
    const left = served.map((r) => Number(r.response.headers.get('ratelimit-remaining')));
    expect(left.sort((x, y) => x - y)).toEqual(Array.from({ length: remaining }, (_, i) => i));
  });

  it('shares the daily budget of unattended reads of a consent', async () => {
    const { key } = await first.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(first, key, { frequencyPerDay: 3 });
    const read = (api: PorticoClient) =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: { path: { accountId }, header: { 'Consent-ID': consentId } },
      });
    const [a, b] = both(key);
    const statuses: number[] = [];
    for (const api of [a, b, a, b]) statuses.push((await read(api)).response.status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('replays a payment with one Idempotency-Key on the other replica: the bank sees it once', async () => {
    const { key } = await first.newTenantWithKey('app');
    const [a, b] = both(key);
    const idempotencyKey = randomUUID();
    const pay = (api: PorticoClient) =>
      api.POST('/v1/payments', {
        params: { header: { 'Idempotency-Key': idempotencyKey } },
        body: domesticPayment(),
      });
    const calls = () => first.sandbox.bank.control.calls().initiatePayment ?? 0;
    const before = calls();
    const created = await pay(a);
    const replayed = await pay(b);
    expect(created.response.status).toBe(201);
    expect(replayed.response.status).toBe(201);
    expect(replayed.data!.paymentId).toBe(created.data!.paymentId);
    expect(replayed.response.headers.get('idempotent-replayed')).toBe('true');
    expect(calls() - before).toBe(1);
  });

  it('stops a key revoked on one replica on the other within about a second, long before the cache TTL', async () => {
    const { key, keyId, tenantId } = await first.newTenantWithKey('app');
    const [a, b] = both(key);
    // Both replicas have the key in their caches.
    expect((await a.GET('/v1/me')).response.status).toBe(200);
    expect((await b.GET('/v1/me')).response.status).toBe(200);
    await first.tenants.revokeKey(keyId, tenantId);
    expect((await a.GET('/v1/me')).response.status).toBe(401);
    // The other replica hears of it by NOTIFY (PostgreSQL) or its 1 s poll of revocations (embedded
    // engine, which delivers no notices); its cache would otherwise trust the key for 60 s.
    let status = 200;
    for (let i = 0; i < 100 && status !== 401; i++) {
      await new Promise((done) => setTimeout(done, 50));
      status = (await b.GET('/v1/me')).response.status;
    }
    expect(status).toBe(401);
  });

  it('leaves exactly one access-log row for every read the bank served, whichever replica served it', async () => {
    const { key, tenantId } = await first.newTenantWithKey('app');
    const attended = await approvedConsent(first, key);
    const unattended = await approvedConsent(first, key, { frequencyPerDay: 10 });
    // More keys of the tenant, so that the reads stay within each key's rate limit (8 a minute here).
    const keys: string[] = [];
    for (let i = 0; i < 10; i++) keys.push((await first.tenants.issueKey(tenantId, 'app')).key);
    const requestIds = () => first.sandbox.bank.control.requestIds('getBalances');
    const before = new Set(requestIds());
    const reads = Array.from({ length: 40 }, (_, i) => {
      const consent = i % 4 === 3 ? unattended : attended;
      return porticoClient(i % 2 ? first : second, keys[i % 10]).GET(
        '/v1/accounts/{accountId}/balances',
        {
          params: {
            path: { accountId: consent.accountId },
            header: {
              'Consent-ID': consent.consentId,
              ...(consent === attended ? { 'PSU-IP-Address': '192.0.2.7' } : {}),
            },
          },
        },
      );
    });
    const answers = await Promise.all(reads);
    expect(answers.map((r) => r.response.status)).toEqual(answers.map(() => 200));
    const served = requestIds().filter((id) => !before.has(id));
    expect(served).toHaveLength(40);
    // Each replica completes the rows of the reads it answered after the answer (completeSoon).
    for (const replica of [first, second])
      await replica.app.get(AccessLogService).flushCompletions();
    const rows: { request_id: string; outcome: string }[] = await first.dataSource.query(
      `SELECT request_id, outcome FROM access_log
        WHERE tenant_id = $1 AND operation = 'getAccountBalances'`,
      [tenantId],
    );
    expect(rows).toHaveLength(40);
    expect(rows.filter((row) => row.outcome !== 'ok')).toEqual([]);
    expect(rows.map((row) => row.request_id).sort()).toEqual([...served].sort());
  });
});

describe('a replica that missed the revocation notice', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ KEY_CACHE_TTL_MS: '1000' });
  });
  afterAll(() => gateway.close());

  it('stops a key revoked without a notice once KEY_CACHE_TTL_MS has passed', async () => {
    const { key, keyId } = await gateway.newTenantWithKey('app');
    const api = porticoClient(gateway, key);
    expect((await api.GET('/v1/me')).response.status).toBe(200);
    // Revoked behind Portico's back (plain SQL, no NOTIFY): only the TTL bounds the cached key.
    await gateway.dataSource.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [keyId]);
    await eventually(
      async () => (await api.GET('/v1/me')).response.status === 401,
      5_000,
      'the revoked key refused once its cached copy expired',
    );
    expect((await api.GET('/v1/me')).response.status).toBe(401);
  });
});
