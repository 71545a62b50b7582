import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '#src/platform/config/app-config.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { approvedConsentOverHttp } from '../support/consent-flow.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { testEnv } from '../support/test-gateway.js';
import { eventually } from '../support/chaos.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';

/**
 * Every session of the gateway's database terminated every 300–500 ms while 16 reads run at once, as a
 * failover or an operator's pg_terminate_backend would: the gateway must outlive it (a client of any pool
 * left without an error listener for one tick crashed the process) and keep the completion of every read
 * it answered. OUTAGE_RUNS runs (a gateway each) of OUTAGE_ROUNDS terminations: short in CI, and
 * `OUTAGE_RUNS=10 OUTAGE_ROUNDS=60` on demand.
 */
const RUNS = Number(process.env.OUTAGE_RUNS ?? 1);
const ROUNDS = Number(process.env.OUTAGE_ROUNDS ?? 20);
const READERS = 16;
const USER_PRESENT = { 'psu-ip-address': '192.0.2.10' };

interface Run {
  died: boolean;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  stderr: string;
  answered: Map<string, number>;
  terminated: number;
  sentAfter: number;
  sealedSent: number;
}

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

async function startGateway(
  url: string,
): Promise<{ gateway: RunningProcess; base: string; key: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gateway = startProcess('dist/main.js', [], {
    ...FREE_SANDBOX_PORTS,
    DATABASE_URL: url,
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    // A row still `sent` may be sealed 9 s after it was written (deadline, outcome slack, grace): within the run.
    UPSTREAM_DEADLINE_MS: '2000',
    // Every read reaches the bank: the key's minute would refuse most of them before anything is logged.
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  });
  const [, key] = await gateway.waitFor(
    /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
    90_000,
  );
  return { gateway, base, key: key! };
}

async function oneRun(database: OwnDatabase): Promise<Run> {
  const { gateway, base, key } = await startGateway(database.url);
  try {
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(init.headers as Record<string, string>),
        },
      });
    const { consentId, accountId } = await approvedConsentOverHttp(call);
    const admin = new URL(database.url);
    const name = admin.pathname.slice(1);
    admin.pathname = '/postgres';

    const answered = new Map<string, number>();
    let stopped = false;
    const reader = async () => {
      while (!stopped) {
        const requestId = randomUUID();
        const read = await call(`/v1/accounts/${accountId}/balances`, {
          headers: { 'consent-id': consentId, 'x-request-id': requestId, ...USER_PRESENT },
        }).catch(() => undefined);
        if (!read) {
          await sleep(20);
          continue;
        }
        await read.arrayBuffer();
        answered.set(requestId, read.status);
      }
    };
    const readers = Array.from({ length: READERS }, reader);
    let terminated = 0;
    let died = false;
    void gateway.exited.then(() => (died = true));
    for (let round = 0; round < ROUNDS && !died; round++) {
      await sleep(300 + Math.random() * 200);
      const [row] = await query<{ count: string }>(
        admin.toString(),
        `SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      );
      terminated += Number(row!.count);
    }
    // The process had time to die of the last termination (it did 80–123 ms after one).
    await sleep(500);
    stopped = true;
    await Promise.all(readers);
    if (died)
      return {
        died,
        exit: await gateway.exited,
        stderr: gateway.stderr(),
        answered,
        terminated,
        sentAfter: -1,
        sealedSent: -1,
      };

    // Every read answered 200 has its row completed, before the sealer could seal it `sent`.
    const ok = [...answered].filter(([, status]) => status === 200).map(([id]) => id);
    const stillSent = async () =>
      (
        await query<{ request_id: string }>(
          database.url,
          `SELECT request_id FROM access_log WHERE outcome = 'sent' AND request_id = ANY($1::uuid[])`,
          [ok],
        )
      ).length;
    await eventually(
      async () => (await stillSent()) === 0,
      15_000,
      'answered reads completed',
    ).catch(() => undefined);
    const sentAfter = await stillSent();
    const [sealed] = await query<{ count: string }>(
      database.url,
      `SELECT count(*) AS count FROM access_log a JOIN audit_chain c
          ON c.entry_kind = 'access_log' AND c.entry_id = a.id
        WHERE a.outcome = 'sent' AND a.request_id = ANY($1::uuid[])`,
      [ok],
    );
    return {
      died,
      stderr: gateway.stderr(),
      answered,
      terminated,
      sentAfter,
      sealedSent: Number(sealed!.count),
    };
  } finally {
    if (process.env.OUTAGE_LOG_DIR)
      writeFileSync(
        `${process.env.OUTAGE_LOG_DIR}/gateway-${Date.now()}.log`,
        gateway.stdout() + gateway.stderr(),
      );
    gateway.child.kill('SIGKILL');
    await gateway.exited;
  }
}

(process.env.DATABASE_URL ? describe : describe.skip)(
  'every session of its database terminated every 300–500 ms under 16 concurrent reads',
  () => {
    const databases: OwnDatabase[] = [];
    afterAll(async () => {
      for (const database of databases) await database.drop();
    });

    it(
      `the gateway outlives ${RUNS} run(s) of ${ROUNDS} rounds and keeps the completion of every read it answered`,
      async () => {
        const runs: Run[] = [];
        for (let index = 0; index < RUNS; index++) {
          const database = await ownDatabase('terminations');
          databases.push(database);
          const run = await oneRun(database);
          runs.push(run);
          const statuses = new Map<number, number>();
          for (const status of run.answered.values())
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          process.stdout.write(
            `terminations run ${index + 1}: ${run.died ? `DIED ${JSON.stringify(run.exit)}` : 'alive'}, ` +
              `${run.terminated} sessions terminated, answers ${JSON.stringify(Object.fromEntries(statuses))}, ` +
              `answered 200 and still sent: ${run.sentAfter} (sealed so: ${run.sealedSent})\n`,
          );
          if (run.died) process.stdout.write(`the gateway's standard error:\n${run.stderr}\n`);
        }
        const deaths = runs.filter((run) => run.died);
        expect(deaths.map((run) => run.stderr)).toEqual([]);
        for (const run of runs) {
          expect(
            [...run.answered.values()].filter((status) => status === 200).length,
          ).toBeGreaterThan(0);
          expect(run.sentAfter).toBe(0);
          expect(run.sealedSent).toBe(0);
        }
      },
      RUNS * (60_000 + ROUNDS * 1_000),
    );
  },
);

/**
 * A completion waits in the gateway while its database is cut off for longer than the sealer waits for a
 * `sent` row (the deadline, the outcome's slack and the grace: 9 s here), and another replica, which
 * reaches the database, runs the sealer meanwhile: the writer's lease keeps the row unsealed, and the
 * completion is written once the database is back.
 */
(process.env.DATABASE_URL ? describe : describe.skip)(
  'a completion held through a cut longer than the seal horizon',
  () => {
    let database: OwnDatabase;
    let proxy: TcpProxy;
    let sandbox: RunningSandbox;
    const gateways: RunningProcess[] = [];
    afterAll(async () => {
      for (const gateway of gateways) {
        gateway.child.kill('SIGKILL');
        await gateway.exited;
      }
      await proxy?.close();
      await sandbox?.close();
      await database?.drop();
    });

    async function start(url: string): Promise<{ base: string; key: string }> {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const gateway = startProcess('dist/main.js', [], {
        DATABASE_URL: url,
        PORT: String(port),
        PUBLIC_BASE_URL: base,
        UPSTREAM_OB_BASE_URL: sandbox.openBankingUrl,
        UPSTREAM_CARD_BASE_URL: sandbox.cardUrl,
        SANDBOX_SCA_PUBLIC_URL: sandbox.scaUrl,
        UPSTREAM_DEADLINE_MS: '2000',
        UPSTREAM_RETRY_DELAYS_MS: 'none',
        LOG_LEVEL: 'warn',
      });
      gateways.push(gateway);
      const [, key] = await gateway.waitFor(
        /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
        90_000,
      );
      return { base, key: key! };
    }

    it('is written after the cut, and the row is sealed with it, not `sent`', async () => {
      database = await ownDatabase('held');
      const target = new URL(database.url);
      proxy = await TcpProxy.start(await freePort(), {
        host: target.hostname,
        port: Number(target.port || 5432),
      });
      sandbox = await startSandbox({
        ...loadConfig(testEnv()).sandbox,
        openBankingPort: 0,
        scaPort: 0,
        cardPort: 0,
        posPort: 0,
      });
      const writer = await start(proxy.through(database.url));
      // The other replica: it reaches the database throughout and seals every second.
      await start(database.url);
      const call = (path: string, init: RequestInit = {}) =>
        fetch(`${writer.base}${path}`, {
          ...init,
          headers: {
            authorization: `Bearer ${writer.key}`,
            'content-type': 'application/json',
            ...(init.headers as Record<string, string>),
          },
        });
      const { consentId, accountId } = await approvedConsentOverHttp(call);

      // The bank answers after 1 s; the database is cut off meanwhile, once the row is written ahead.
      sandbox.chaos.add({ operation: 'getBalances', fault: 'delay', delayMs: 1000, times: 1 });
      const requestId = randomUUID();
      const reading = call(`/v1/accounts/${accountId}/balances`, {
        headers: { 'consent-id': consentId, 'x-request-id': requestId, ...USER_PRESENT },
      });
      const row = async () =>
        (
          await query<{ id: string; outcome: string; sealed: boolean }>(
            database.url,
            `SELECT a.id, a.outcome, EXISTS (SELECT 1 FROM audit_chain c
                      WHERE c.entry_kind = 'access_log' AND c.entry_id = a.id) AS sealed
               FROM access_log a WHERE a.request_id = $1`,
            [requestId],
          )
        )[0];
      await eventually(async () => (await row()) !== undefined, 5_000, 'the row written ahead');
      await proxy.cut();
      const read = await reading;
      expect(read.status).toBe(200);
      // Past the horizon (9 s) and a few passes of the other replica's sealer, within the writer's lease.
      await sleep(12_000);
      expect(await row()).toMatchObject({ outcome: 'sent', sealed: false });

      await proxy.restore();
      await eventually(async () => (await row())?.outcome === 'ok', 10_000, 'the completion');
      await eventually(async () => (await row())?.sealed === true, 15_000, 'the row sealed');
      expect(await row()).toMatchObject({ outcome: 'ok', sealed: true });
    }, 120_000);
  },
);
