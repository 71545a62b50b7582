import { afterAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';

/**
 * A replica started while its database's sessions are terminated (a failover, an operator's
 * pg_terminate_backend, the soak's faults beside a restarted replica): its start-up's reads and writes
 * (the sandbox's state, the sandbox's keys) are tried again while the database cannot serve, so it
 * starts once the fault is over, as a running replica outlives it. Before, a termination during the
 * sandbox's keys ended the start (`failed to start: … terminating connection`).
 */
async function terminateAll(url: string): Promise<number> {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>(
      `SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity
        WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [name],
    );
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

(process.env.DATABASE_URL ? describe : describe.skip)(
  "a gateway started while its database's sessions are terminated",
  () => {
    let database: OwnDatabase;
    let gateway: RunningProcess | undefined;
    afterAll(async () => {
      gateway?.child.kill('SIGKILL');
      await gateway?.exited;
      await database?.drop();
    });

    it('starts once the terminations stop, and serves', async () => {
      database = await ownDatabase('start_terminations');
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const started = startProcess('dist/main.js', [], {
        ...FREE_SANDBOX_PORTS,
        DATABASE_URL: database.url,
        PORT: String(port),
        PUBLIC_BASE_URL: base,
        LOG_LEVEL: 'warn',
      });
      gateway = started;
      let exited = false;
      void started.exited.then(() => (exited = true));
      const banner = started.waitFor(
        /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
        120_000,
      );
      let bannered = false;
      void banner.then(
        () => (bannered = true),
        () => undefined,
      );
      // Every session terminated every 0.6–1 s for the first 20 s of the start, or until it is up.
      let terminated = 0;
      for (const until = Date.now() + 20_000; Date.now() < until && !exited && !bannered;) {
        terminated += await terminateAll(database.url);
        await sleep(600 + Math.random() * 400);
      }
      const [, key] = await banner.catch((error: unknown) => {
        throw new Error(`${String(error)}\nthe gateway's standard error:\n${started.stderr()}`);
      });
      expect(exited).toBe(false);
      expect(terminated).toBeGreaterThan(0);
      const me = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      expect(me.status).toBe(200);
    }, 180_000);
  },
);
