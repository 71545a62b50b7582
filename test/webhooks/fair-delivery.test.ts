import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../support/chaos.js';
import { consentRequest } from '../support/fixtures.js';
import { freePort, runProcess } from '../support/processes.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { Receiver, verifyStandardWebhook } from './receiver.js';
import { shareRoom } from '#src/webhooks/webhook-claim.js';

const DEAD_ENDPOINTS = 40;
const EVENTS_PER_DEAD_ENDPOINT = 500;

interface Endpoint {
  id: string;
  secret: string;
  status: string;
  failingSince: string | null;
  pausedAt: string | null;
}

interface AttemptTimes {
  endpoint_id: string;
  started_ms: number;
  finished_ms: number;
}

/**
 * One endpoint's attempts as its back-off shows them: the first round (started before any of its
 * attempts finished: the endpoint was not known to fail yet), each later attempt's pause since the
 * latest attempt that finished before it started (a failure sets the endpoint's retry_at), and how many
 * later attempts overlapped another attempt of the endpoint (a failing endpoint gets one at a time).
 */
function backOff(attempts: AttemptTimes[], endpointId: string) {
  const mine = attempts
    .filter((a) => a.endpoint_id === endpointId)
    .map((a) => ({ start: Number(a.started_ms), finish: Number(a.finished_ms) }));
  const firstFinish = Math.min(...mine.map((a) => a.finish));
  const later = mine.filter((a) => a.start >= firstFinish);
  return {
    attempts: mine.length,
    firstRound: mine.length - later.length,
    pauses: later.map(
      (a) => a.start - Math.max(...mine.filter((b) => b.finish <= a.start).map((b) => b.finish)),
    ),
    overlapping: later.filter((a) =>
      mine.some((b) => b !== a && b.start <= a.start && b.finish > a.start),
    ).length,
  };
}

/**
 * The delivery worker runs on its own timer with the shipped defaults (1 s interval, 8 attempts at once,
 * 5 s first retry pause, 15 s timeout, 5 days before a pause): what an operator runs.
 */
describe('fair webhook delivery', () => {
  let gateway: TestGateway;
  let database: OwnDatabase;
  let healthy: Receiver;
  let hanging: Receiver;

  beforeAll(async () => {
    database = await ownDatabase('fair');
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      WEBHOOK_WORKER_INTERVAL_MS: '1000',
      LOG_LEVEL: 'warn',
    });
    healthy = await Receiver.start();
    hanging = await Receiver.start();
    hanging.behaviour = () => 'hang';
  });
  afterAll(async () => {
    // The held requests end now, so the worker's attempts end before the gateway closes.
    await hanging.close();
    await gateway.close();
    await healthy.close();
    await database.drop();
  });

  const call = (key: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    gateway.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { payload } : {}),
    });
  const query = <T>(sql: string, params: unknown[] = []) =>
    gateway.dataSource.query(sql, params) as Promise<T[]>;

  async function register(key: string, url: string, eventTypes: string[]): Promise<Endpoint> {
    const answer = await call(key, 'POST', '/v1/webhooks/endpoints', { url, eventTypes });
    expect(answer.statusCode).toBe(201);
    return answer.json<Endpoint>();
  }

  /** Events of the tenant written straight into the outbox, due for minutes, to each of its endpoints. */
  async function seedBacklog(tenantId: string, events: number): Promise<void> {
    await query(
      `INSERT INTO webhook_events (id, tenant_id, type, resource_id, body, created_at)
       SELECT gen_random_uuid(), $1, 'consent.status_changed', NULL,
              '{"type":"consent.status_changed","timestamp":"2026-11-23T10:00:00.000Z","data":{}}',
              now() - interval '10 minutes' + n * interval '1 millisecond'
         FROM generate_series(1, $2::int) AS n`,
      [tenantId, events],
    );
    await query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, tenant_id, status, next_attempt_at)
       SELECT v.id, e.id, v.tenant_id, 'pending', v.created_at
         FROM webhook_events v JOIN webhook_endpoints e ON e.tenant_id = v.tenant_id
        WHERE v.tenant_id = $1`,
      [tenantId],
    );
  }

  const until = (check: () => Promise<boolean>, limitMs = 30_000) => eventually(check, limitMs);

  it("delivers a healthy endpoint's events within seconds while another tenant's 40 dead endpoints have 20,000 deliveries due", async () => {
    const noisy = await gateway.newTenantWithKey('app');
    const closedPort = await freePort();
    const dead: string[] = [];
    for (let i = 0; i < DEAD_ENDPOINTS; i++) {
      // Half hold every request until the timeout, half refuse the connection.
      const url = i % 2 ? `${hanging.url}?n=${i}` : `http://127.0.0.1:${closedPort}/hooks?n=${i}`;
      dead.push((await register(noisy.key, url, ['consent.status_changed'])).id);
    }
    // The backlog, written straight into the outbox: all of it due before the healthy tenant's events.
    await seedBacklog(noisy.tenantId, EVENTS_PER_DEAD_ENDPOINT);
    const [{ waiting }] = await query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending'`,
      [noisy.tenantId],
    );
    expect(waiting).toBe(DEAD_ENDPOINTS * EVENTS_PER_DEAD_ENDPOINT);

    const quiet = await gateway.newTenantWithKey('app');
    const endpoint = await register(quiet.key, healthy.url, ['consent.status_changed']);
    const started = Date.now();
    // Events over 16 s: through the dead endpoints' first back-off (5 s) and their held attempts (15 s).
    const latencies: number[] = [];
    for (let i = 0; i < 8; i++) {
      const created = await call(quiet.key, 'POST', '/v1/consents', consentRequest());
      expect(created.statusCode).toBe(201);
      const sent = Date.now();
      const { consentId } = created.json<{ consentId: string }>();
      await healthy.until(() => healthy.received.some((r) => r.body.includes(consentId)), 15_000);
      latencies.push(Date.now() - sent);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, started + 2000 * (i + 1) - Date.now())),
      );
    }
    const window = Date.now() - started;
    const attempts = await query<AttemptTimes>(
      `SELECT endpoint_id, extract(epoch FROM started_at) * 1000 AS started_ms,
              extract(epoch FROM coalesce(finished_at, now())) * 1000 AS finished_ms
         FROM webhook_attempts WHERE endpoint_id = ANY($1::uuid[]) ORDER BY started_at`,
      [dead],
    );
    const perEndpoint = dead.map((id) => backOff(attempts, id));
    const gaps = perEndpoint.flatMap((endpoint) => endpoint.pauses);
    // The most attempts to the noisy tenant in flight at once.
    const busiest = Math.max(
      0,
      ...attempts.map(
        (a) =>
          attempts.filter(
            (b) => b.started_ms <= a.started_ms && Number(b.finished_ms) > Number(a.started_ms),
          ).length,
      ),
    );
    process.stdout.write(
      `healthy endpoint latency over ${window} ms with ${waiting} deliveries due elsewhere: ` +
        `${latencies.join(', ')} ms (max ${Math.max(...latencies)}); dead endpoints: ${attempts.length} attempts, ` +
        `at most ${Math.max(...perEndpoint.map((e) => e.attempts))} per endpoint, shortest pause after a failure ` +
        `${gaps.length ? Math.min(...gaps) : '-'} ms, at most ${busiest} in flight at once\n`,
    );

    expect(Math.max(...latencies)).toBeLessThan(5000);
    for (const request of healthy.received)
      expect(verifyStandardWebhook(endpoint.secret, request.headers, request.body)).toBe(true);
    expect(healthy.received).toHaveLength(8);
    // Each dead endpoint backs off on its own: after its first failure one attempt at a time, each a
    // pause (5 s less 20 % jitter) after the last failure.
    expect(Math.max(...perEndpoint.map((endpoint) => endpoint.attempts))).toBeLessThanOrEqual(4);
    for (const endpoint of perEndpoint) expect(endpoint.overlapping).toBe(0);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(4000);
    // The noisy tenant holds at most its share of the replica's attempts (half of 8).
    expect(busiest).toBeLessThanOrEqual(4);
    const endpointsNow = (await call(noisy.key, 'GET', '/v1/webhooks/endpoints')).json<{
      items: Endpoint[];
    }>().items;
    expect(endpointsNow.filter((e) => e.status === 'failing').length).toBeGreaterThan(0);
    expect(endpointsNow.filter((e) => e.pausedAt !== null)).toEqual([]);
  }, 120_000);

  it("backs a failing endpoint off on its own: one attempt per pause, while the same tenant's healthy endpoint keeps receiving", async () => {
    const tenant = await gateway.newTenantWithKey('app');
    const closedPort = await freePort();
    const dead = [
      await register(tenant.key, `http://127.0.0.1:${closedPort}/a`, ['consent.status_changed']),
      await register(tenant.key, `http://127.0.0.1:${closedPort}/b`, ['consent.status_changed']),
    ].map((endpoint) => endpoint.id);
    await seedBacklog(tenant.tenantId, 300);
    const started = Date.now();
    const live = await register(tenant.key, `${healthy.url}?live`, ['consent.status_changed']);
    const latencies: number[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await call(tenant.key, 'POST', '/v1/consents', consentRequest());
      expect(created.statusCode).toBe(201);
      const sent = Date.now();
      const { consentId } = created.json<{ consentId: string }>();
      await healthy.until(() => healthy.received.some((r) => r.body.includes(consentId)), 15_000);
      latencies.push(Date.now() - sent);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, started + 2000 * (i + 1) - Date.now())),
      );
    }
    const attempts = await query<AttemptTimes>(
      `SELECT endpoint_id, extract(epoch FROM started_at) * 1000 AS started_ms,
              extract(epoch FROM coalesce(finished_at, now())) * 1000 AS finished_ms
         FROM webhook_attempts WHERE endpoint_id = ANY($1::uuid[]) ORDER BY started_at`,
      [dead],
    );
    const perEndpoint = dead.map((id) => backOff(attempts, id));
    const gaps = perEndpoint.flatMap((endpoint) => endpoint.pauses);
    process.stdout.write(
      `over ${Date.now() - started} ms, 600 deliveries due to 2 refusing endpoints: ${perEndpoint.map((e) => e.attempts).join(' and ')} attempts, first rounds of ${perEndpoint.map((e) => e.firstRound).join(' and ')} ` +
        `(pauses ${gaps.join(', ')} ms); the same tenant's healthy endpoint: ${latencies.join(', ')} ms\n`,
    );
    expect(healthy.received.filter((r) => r.path === '/hooks?live')).toHaveLength(6);
    expect(Math.max(...latencies)).toBeLessThan(5000);
    for (const endpoint of perEndpoint) {
      expect(endpoint.firstRound).toBeGreaterThanOrEqual(1);
      // Then at most the retries of 5 s and 30 s (less 20 %) in the 12 s: a first round of two failures
      // already waits the second pause.
      expect(endpoint.attempts - endpoint.firstRound).toBeLessThanOrEqual(2);
      // After the first failure, one attempt at a time.
      expect(endpoint.overlapping).toBe(0);
    }
    // 5 s less 20 % jitter, then 30 s less 20 %.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(4000);
    const shown = (
      await call(tenant.key, 'GET', `/v1/webhooks/endpoints/${dead[0]}`)
    ).json<Endpoint>();
    expect(shown).toMatchObject({
      status: 'failing',
      failingSince: expect.any(String),
      pausedAt: null,
    });
    expect(
      (await call(tenant.key, 'GET', `/v1/webhooks/endpoints/${live.id}`)).json(),
    ).toMatchObject({
      status: 'active',
    });
  }, 120_000);

  it("shares a replica's room round the endpoints due, within each endpoint's and each tenant's bound", () => {
    const candidate = (endpointId: string, tenantId: string, failing = false, busy = 0) => ({
      endpointId,
      tenantId,
      failing,
      busy,
    });
    const due = [
      candidate('a1', 'A'),
      candidate('b1', 'B'),
      candidate('a2', 'A', true),
      candidate('a3', 'A', false, 3),
      candidate('c1', 'C', false, 1),
    ];
    // One each first; then the healthy ones again up to their bound (4 in flight), the tenant's share (3).
    expect(Object.fromEntries(shareRoom(due, 8, () => 3, 4))).toEqual({
      a1: 1,
      b1: 3,
      a2: 1,
      a3: 1,
      c1: 2,
    });
    expect(Object.fromEntries(shareRoom(due, 3, () => 3, 4))).toEqual({ a1: 1, b1: 1, a2: 1 });
    // A tenant whose share this replica already holds gets nothing.
    expect(Object.fromEntries(shareRoom(due, 8, (tenant) => (tenant === 'A' ? 0 : 4), 4))).toEqual({
      b1: 4,
      c1: 3,
    });
  });

  it('pauses an endpoint failing for 5 days with a webhook_endpoint.paused event, keeps its deliveries, and resumes it through the API and the CLI', async () => {
    const { key, slug } = await gateway.newTenantWithKey('app');
    healthy.behaviour = (request) => (request.path.startsWith('/hooks?down') ? 503 : 200);
    const failing = await register(key, `${healthy.url}?down`, ['consent.status_changed']);
    const ops = await register(key, healthy.url, ['webhook_endpoint.paused']);
    const consents: string[] = [];
    const newConsent = async () => {
      const created = await call(key, 'POST', '/v1/consents', consentRequest());
      expect(created.statusCode).toBe(201);
      consents.push(created.json<{ consentId: string }>().consentId);
    };
    const requestsTo = (path: string) => healthy.received.filter((r) => r.path === path);
    const view = async () =>
      (await call(key, 'GET', `/v1/webhooks/endpoints/${failing.id}`)).json<Endpoint>();

    await newConsent();
    await until(async () => (await view()).status === 'failing');
    const first = await view();
    expect(first.failingSince).toEqual(expect.any(String));
    expect(first.pausedAt).toBeNull();

    // Five days of failures, shortened: the endpoint has been failing since five days and a minute.
    await query(
      `UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`,
      [failing.id],
    );
    const failingSince = (await view()).failingSince!;
    // Its next failure (after its back-off) pauses it.
    await until(async () => (await view()).status === 'paused');
    const paused = await view();
    expect(paused.pausedAt).toEqual(expect.any(String));
    await healthy.until(() =>
      requestsTo('/hooks').some((r) => r.body.includes('webhook_endpoint.paused')),
    );
    const notice = requestsTo('/hooks').find((r) => r.body.includes('webhook_endpoint.paused'))!;
    expect(verifyStandardWebhook(ops.secret, notice.headers, notice.body)).toBe(true);
    expect(JSON.parse(notice.body)).toEqual({
      type: 'webhook_endpoint.paused',
      timestamp: expect.any(String),
      sequence: 1,
      data: {
        endpointId: failing.id,
        status: 'paused',
        failingSince,
        pausedAt: paused.pausedAt,
      },
    });

    // Paused: new events are kept for it, nothing is attempted.
    await newConsent();
    await newConsent();
    const attemptsWhilePaused = requestsTo('/hooks?down').length;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(requestsTo('/hooks?down')).toHaveLength(attemptsWhilePaused);
    const [{ pending }] = await query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
      [failing.id],
    );
    expect(pending).toBe(3);

    // Another tenant cannot resume it.
    const other = await gateway.newTenantWithKey('admin');
    expect(
      (await call(other.key, 'POST', `/v1/webhooks/endpoints/${failing.id}/resume`)).statusCode,
    ).toBe(404);

    // The receiver works again; the app resumes the endpoint and every kept event arrives.
    healthy.behaviour = () => 200;
    const resumed = await call(key, 'POST', `/v1/webhooks/endpoints/${failing.id}/resume`);
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toMatchObject({ status: 'active', failingSince: null, pausedAt: null });
    await healthy.until(() =>
      consents.every((id) =>
        requestsTo('/hooks?down').some((r) => r.answered === 200 && r.body.includes(id)),
      ),
    );
    // Recorded just after the receiver answers.
    await until(
      async () =>
        (
          await query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`,
            [failing.id],
          )
        )[0].n === 3,
    );

    // An operator resumes with the CLI.
    await query(
      `UPDATE webhook_endpoints SET paused_at = now(), failing_since = now() WHERE id = $1`,
      [failing.id],
    );
    const cli = (...args: string[]) =>
      runProcess('dist/cli/main.js', args, { DATABASE_URL: database.url });
    expect((await cli('webhook:list', slug)).stdout).toMatch(new RegExp(`${failing.id}.*paused`));
    const resumedByCli = await cli('webhook:resume', slug, failing.id);
    expect(resumedByCli.code).toBe(0);
    expect(resumedByCli.stdout).toContain(`resumed webhook endpoint ${failing.id}`);
    expect((await view()).status).toBe('active');
  }, 120_000);
});
