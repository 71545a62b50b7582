import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { consentRequest } from '../support/fixtures.js';
import { eventually } from '../support/chaos.js';
import { PrivatePostgres, privatePostgresAvailable } from '../support/private-postgres.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';
import { parseSamples } from '../support/prometheus.js';
import { Receiver } from './receiver.js';

/**
 * Every periodic job on, as the soak runs them. The worker looks every second (the default) with room
 * for two attempts (a tenant's share: one per replica), so that a backlog shows whether a replica claims
 * again as soon as an attempt ends or only an interval later.
 */
const JOBS_ENV = {
  WEBHOOK_WORKER_INTERVAL_MS: '1000',
  WEBHOOK_CONCURRENCY: '2',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_LEASE_MS: '4000',
  WEBHOOK_RETRY_SCHEDULE_MS: '500',
  WEBHOOK_RETRY_JITTER_PERCENT: '0',
  WEBHOOK_RENEWAL_INTERVAL_MS: '1000',
  RESOLVER_INTERVAL_MS: '500',
  PROVIDER_SYNC_INTERVAL_MS: '500',
  AUDIT_SEAL_INTERVAL_MS: '500',
  AUDIT_CHECKPOINT_INTERVAL_MS: '1000',
  AUDIT_RETENTION_INTERVAL_MS: '1000',
  DB_ANALYZE_INTERVAL_MS: '1000',
  SECRETS_RESEAL_INTERVAL_MS: '1000',
  RECONCILIATION_INTERVAL_MS: '1000',
  AUDIT_VERIFY_INTERVAL_MS: '1000',
  AUDIT_PARTITION_INTERVAL_MS: '1000',
};

interface Replica {
  process: RunningProcess;
  base: string;
  metricsUrl: string;
}

async function startReplica(databaseUrl: string): Promise<Replica> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const running = startProcess('dist/main.js', [], {
    ...FREE_SANDBOX_PORTS,
    ...JOBS_ENV,
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '6',
    RECONCILE_ON_START: 'false',
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: 'warn',
  });
  const [, metricsUrl] = await running.waitFor(/Metrics: +(http:\/\/\S+)/, 90_000);
  return { process: running, base, metricsUrl: metricsUrl! };
}

/** Runs of each periodic job that ended well, by job name. */
async function jobRuns(replica: Replica): Promise<Map<string, number>> {
  const text = await (await fetch(replica.metricsUrl)).text();
  const runs = new Map<string, number>();
  for (const sample of parseSamples(text))
    if (sample.name === 'portico_job_runs_total' && sample.labels.outcome === 'ok')
      runs.set(sample.labels.job!, sample.value);
  return runs;
}

(process.env.DATABASE_URL && privatePostgresAvailable ? describe : describe.skip)(
  'webhook delivery and every periodic job across a PostgreSQL restart',
  () => {
    let server: PrivatePostgres;
    let receiver: Receiver;
    const replicas: Replica[] = [];
    let key = '';

    const call = async (replica: Replica, path: string, body?: unknown) =>
      fetch(`${replica.base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).catch(() => undefined);

    /** A consent made through `replica`; its id once answered 201 (undefined while the database is away). */
    const consent = async (replica: Replica): Promise<string | undefined> => {
      const created = await call(replica, '/v1/consents', consentRequest());
      if (created?.status !== 201) return undefined;
      return ((await created.json()) as { consentId: string }).consentId;
    };

    const delivered = (consentIds: Iterable<string>) => {
      const seen = new Set(
        receiver
          .events()
          .filter((event) => event.type === 'consent.status_changed')
          .map((event) => String(event.data.consentId)),
      );
      return [...consentIds].filter((id) => seen.has(id));
    };

    beforeAll(async () => {
      server = PrivatePostgres.start(await freePort());
      receiver = await Receiver.start();
      // One at a time: each start retires the previous demo key, so the last one's key serves both.
      for (let i = 0; i < 2; i++) replicas.push(await startReplica(server.url));
      const last = replicas[replicas.length - 1]!;
      [, key] = (await last.process.waitFor(
        /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
      )) as [string, string];
      const registered = await call(last, '/v1/webhooks/endpoints', {
        url: receiver.url,
        eventTypes: ['consent.status_changed'],
      });
      expect(registered?.status).toBe(201);
    }, 180_000);
    afterAll(async () => {
      for (const replica of replicas) {
        replica.process.child.kill('SIGKILL');
        await replica.process.exited;
      }
      await receiver?.close();
      server?.stop();
    });

    it('delivers every event made before, during and after the restart within seconds, and every job runs again', async () => {
      const before: string[] = [];
      for (let i = 0; i < 4; i++) before.push((await consent(replicas[i % 2]!))!);
      await receiver.until(() => delivered(before).length === before.length);

      // Traffic and deliveries under way while the server restarts.
      let traffic = true;
      const during: string[] = [];
      const load = (async () => {
        for (let i = 0; traffic; i++) {
          const id = await consent(replicas[i % 2]!);
          if (id) during.push(id);
          await sleep(20);
        }
      })();
      // The restart comes once the traffic is seen under way (consents made on both replicas).
      await eventually(async () => during.length >= 4, 10_000, 'traffic under way');
      const runsBefore = await Promise.all(replicas.map(jobRuns));
      server.restart();
      const seenAtRestart = receiver.received.length;
      const firstDelivery = eventually(
        async () => receiver.received.slice(seenAtRestart).some((r) => r.answered === 200),
        30_000,
        'a delivery after the restart',
        20,
      );
      await eventually(
        async () => (await call(replicas[0]!, '/v1/me'))?.status === 200,
        15_000,
        'the gateway answering after the restart',
      );
      // Then a burst, through both replicas at once: more events than one interval's claims can hold.
      const after = (
        await Promise.all(Array.from({ length: 24 }, (_, i) => consent(replicas[i % 2]!)))
      ).filter((id): id is string => id !== undefined);
      traffic = false;
      await load;
      const made = Date.now();
      const firstMs = await firstDelivery;
      const events = [...during, ...after];
      const drainMs = await eventually(
        async () => delivered(events).length === events.length,
        20_000,
        `every event delivered (${events.length})`,
        20,
      ).catch(
        (error: Error) =>
          new Error(
            `${error.message}: ${delivered(events).length} were after ${Date.now() - made} ms`,
          ),
      );
      if (drainMs instanceof Error) throw drainMs;
      process.stdout.write(
        `after the restart: first delivery in ${firstMs} ms; ${events.length} events (${after.length} made in a burst) all delivered ${drainMs} ms after the last was made\n`,
      );
      expect(after.length).toBe(24);
      expect(firstMs).toBeLessThan(10_000);
      expect(drainMs).toBeLessThan(10_000);

      // Each job ended a run well after the restart, on both replicas.
      for (const [index, replica] of replicas.entries())
        await eventually(
          async () => {
            const now = await jobRuns(replica);
            return [...runsBefore[index]!.keys()].every(
              (job) => now.get(job)! > runsBefore[index]!.get(job)!,
            );
          },
          15_000,
          `every job of replica ${index + 1} ran again`,
        );
      process.stdout.write(`jobs: ${[...runsBefore[0]!.keys()].sort().join(', ')}\n`);
      expect([...runsBefore[0]!.keys()]).toEqual(
        expect.arrayContaining(['webhook-delivery', 'resolver', 'provider-sync', 'audit-seal']),
      );
    }, 120_000);
  },
);
