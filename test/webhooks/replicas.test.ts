import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { loadConfig } from '#src/platform/config/app-config.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { consentRequest } from '../support/fixtures.js';
import { freePort, startProcess, type RunningProcess } from '../support/processes.js';
import { testEnv } from '../support/test-gateway.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { Receiver, verifyStandardWebhook } from './receiver.js';

/** Polls until the check returns true (the gateway records an outcome just after the receiver answers). */
async function settled(check: () => Promise<boolean>, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the gateway did not record the outcome in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A real gateway process on the test file's own database, with a fast delivery worker. */
class Replica {
  private process?: RunningProcess;
  key = '';
  readonly base: string;

  constructor(
    private readonly port: number,
    private readonly env: Record<string, string>,
  ) {
    this.base = `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    this.process = startProcess('dist/main.js', [], {
      ...this.env,
      PORT: String(this.port),
      PUBLIC_BASE_URL: this.base,
    });
    const [, key] = await this.process.waitFor(
      /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
      90_000,
    );
    this.key = key;
  }

  async kill(): Promise<void> {
    const running = this.process!;
    running.child.kill('SIGKILL');
    expect((await running.exited).signal).toBe('SIGKILL');
    this.process = undefined;
    this.key = '';
  }

  async stop(): Promise<void> {
    if (!this.process) return;
    this.process.child.kill('SIGTERM');
    await this.process.exited;
    this.process = undefined;
  }

  call(path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }
}

describe('webhook delivery across gateway processes', () => {
  let sandbox: RunningSandbox;
  let database: OwnDatabase;
  let receiver: Receiver;
  let env: Record<string, string>;
  const replicas: Replica[] = [];

  const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };

  const replica = async () => {
    const started = new Replica(await freePort(), env);
    replicas.push(started);
    await started.start();
    return started;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({
      ...loadConfig(testEnv()).sandbox,
      openBankingPort: 0,
      scaPort: 0,
      cardPort: 0,
      posPort: 0,
    });
    database = await ownDatabase('wh');
    receiver = await Receiver.start();
    env = {
      DATABASE_URL: database.url,
      UPSTREAM_OB_BASE_URL: sandbox.openBankingUrl,
      LOG_LEVEL: 'warn',
      RECONCILE_ON_START: 'false',
      RESOLVER_INTERVAL_MS: '0',
      AUDIT_SEAL_INTERVAL_MS: '0',
      WEBHOOK_RENEWAL_INTERVAL_MS: '0',
      WEBHOOK_WORKER_INTERVAL_MS: '20',
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_RETRY_SCHEDULE_MS: '0',
      WEBHOOK_RETRY_JITTER_PERCENT: '0',
      // Room for a loaded machine: a receiver's 200 that takes longer than the timeout is a failed
      // attempt, retried (a third request for an event); a process stalled past the lease loses its
      // attempt to the other. The kill test waits for the lease once.
      WEBHOOK_TIMEOUT_MS: '4000',
      WEBHOOK_LEASE_MS: '8000',
    };
  }, 60_000);
  afterAll(async () => {
    for (const started of replicas) await started.stop().catch(() => undefined);
    await receiver.close();
    await sandbox.close();
    await database.drop();
  });

  it('loses nothing when the gateway is killed with SIGKILL mid-delivery: the lease expires and the attempt is retried', async () => {
    const first = await replica();
    const registered = await first.call('/v1/webhooks/endpoints', {
      url: receiver.url,
      eventTypes: ['consent.status_changed'],
    });
    expect(registered.status).toBe(201);
    const { secret } = (await registered.json()) as { secret: string };

    // The receiver holds the first request open: the gateway is mid-delivery when it dies.
    receiver.behaviour = (_request, seenBefore) => (seenBefore === 0 ? 'hang' : 200);
    const created = await first.call('/v1/consents', consentRequest());
    expect(created.status).toBe(201);
    const { consentId } = (await created.json()) as { consentId: string };
    const [{ id: eventId }] = await query<{ id: string }>(
      'SELECT id FROM webhook_events WHERE resource_id = $1',
      [consentId],
    );
    await receiver.until(() => receiver.received.some((r) => r.headers['webhook-id'] === eventId));
    await first.kill();

    // Another gateway process (a replica, or the same one restarted) takes the attempt over.
    await replica();
    await receiver.until(
      () =>
        receiver.received.filter((r) => r.headers['webhook-id'] === eventId && r.answered === 200)
          .length === 1,
    );
    const requests = receiver.received.filter((r) => r.headers['webhook-id'] === eventId);
    expect(requests.map((r) => r.answered)).toEqual([undefined, 200]);
    expect(verifyStandardWebhook(secret, requests[1].headers, requests[1].body)).toBe(true);
    expect(requests[1].body).toBe(requests[0].body);
    await settled(
      async () =>
        (
          await query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND status = $2', [
            eventId,
            'delivered',
          ])
        ).length === 1,
    );
    const attempts = await query<{ attempt: number; outcome: string; worker: string }>(
      `SELECT attempt, outcome, worker FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt`,
      [eventId],
    );
    expect(attempts).toEqual([
      { attempt: 1, outcome: 'lease-expired', worker: expect.any(String) },
      { attempt: 2, outcome: 'delivered', worker: expect.any(String) },
    ]);
    // The killed process ran the first attempt; the other one took the delivery over.
    expect(attempts[1].worker).not.toBe(attempts[0].worker);
    const [delivery] = await query<{ status: string }>(
      'SELECT status FROM webhook_deliveries WHERE event_id = $1',
      [eventId],
    );
    expect(delivery.status).toBe('delivered');
  }, 180_000);

  it('two gateway processes on one database never run one attempt twice', async () => {
    while (replicas.filter((r) => r.key).length < 2) await replica();
    const [one, two] = replicas.filter((r) => r.key);
    // Each start issues a fresh demo key and retires the previous one: both processes use the newest.
    one.key = two.key;
    receiver.behaviour = (_request, seenBefore) => (seenBefore === 0 ? 500 : 200);
    const before = receiver.received.length;
    // Twenty consents, half through each process: twenty events, each failed once then delivered.
    const consentIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const created = await (i % 2 ? one : two).call('/v1/consents', consentRequest());
      expect(created.status).toBe(201);
      consentIds.push(((await created.json()) as { consentId: string }).consentId);
    }
    const events = await query<{ id: string }>(
      'SELECT id FROM webhook_events WHERE resource_id = ANY($1::uuid[])',
      [consentIds],
    );
    expect(events).toHaveLength(20);
    const ids = new Set(events.map((e) => e.id));
    const seen = () =>
      receiver.received.slice(before).filter((r) => ids.has(String(r.headers['webhook-id'])));
    await receiver.until(() => seen().filter((r) => r.answered === 200).length === 20, 60_000);
    // Each event: exactly one request per attempt (a 500, then a 200), whichever process ran it.
    const perEvent = new Map<string, (number | undefined)[]>();
    for (const request of seen())
      perEvent.set(String(request.headers['webhook-id']), [
        ...(perEvent.get(String(request.headers['webhook-id'])) ?? []),
        request.answered,
      ]);
    expect([...perEvent.values()]).toEqual(Array.from({ length: 20 }, () => [500, 200]));
    await settled(
      async () =>
        (
          await query(
            `SELECT 1 FROM webhook_deliveries WHERE event_id = ANY($1::uuid[]) AND status = 'delivered'`,
            [[...ids]],
          )
        ).length === 20,
    );
    const attempts = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_attempts WHERE event_id = ANY($1::uuid[]) GROUP BY delivery_id`,
      [[...ids]],
    );
    expect(attempts.map((a) => a.n)).toEqual(Array.from({ length: 20 }, () => 2));
  }, 240_000);
});
