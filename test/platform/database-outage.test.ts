import { afterAll, beforeAll, describe, expect, it as jestIt } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { eventually } from '../support/chaos.js';
import { PrivatePostgres, privatePostgresAvailable } from '../support/private-postgres.js';

/** The gateway process the running test started last: its standard error is shown when the test fails. */
let started: RunningProcess | undefined;

/** `it`, whose failure shows the gateway's standard error (a crash's trace, the errors it logged). */
function it(name: string, body: () => Promise<void>, timeoutMs: number): void {
  jestIt(
    name,
    async () => {
      try {
        await body();
      } catch (error) {
        const stderr = started?.stderr() || '(empty)';
        if (error instanceof Error) error.message += `\n\nThe gateway's standard error:\n${stderr}`;
        throw error;
      }
    },
    timeoutMs,
  );
}
it.skip = jestIt.skip;

/** A real gateway process (sandbox mode, its own sandbox) on the database `env` names. */
async function startGateway(
  env: Record<string, string>,
): Promise<{ process: RunningProcess; base: string; key: string; operatorKey: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gateway = startProcess('dist/main.js', [], {
    ...FREE_SANDBOX_PORTS,
    ...env,
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: 'warn',
  });
  started = gateway;
  const [, key] = await gateway.waitFor(
    /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
    90_000,
  );
  const [, operatorKey] = await gateway.waitFor(
    /Operator key \(tenant "operations", role operator\): (ptk_\S+)/,
  );
  return { process: gateway, base, key: key!, operatorKey: operatorKey! };
}

async function status(
  url: string,
  key?: string,
): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const response = await fetch(
    url,
    key ? { headers: { authorization: `Bearer ${key}` } } : {},
  ).catch(() => undefined);
  if (!response) return { status: 0, body: undefined, retryAfter: null };
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
}

function alive(gateway: RunningProcess): boolean {
  return gateway.child.exitCode === null && gateway.child.signalCode === null;
}

/** Nothing a lost database causes reaches the process's top level (a crash trace goes to standard error). */
function expectNoCrashTrace(gateway: RunningProcess): void {
  expect(gateway.stderr()).not.toMatch(/Error|Unhandled|uncaught/i);
  expect(gateway.stdout()).not.toMatch(/unhandled rejection|uncaught exception/i);
}

/** Terminates every session of `database` on its server (as an operator or a failover would). */
async function terminateSessions(adminUrl: string, database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ count: string }>(
      `SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [database],
    );
    return Number(rows[0]!.count);
  } finally {
    await admin.end();
  }
}

describe('the database going away and coming back', () => {
  let database: OwnDatabase;
  let proxy: TcpProxy;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    database = await ownDatabase('outage');
    const target = new URL(database.url);
    proxy = await TcpProxy.start(await freePort(), {
      host: target.hostname,
      port: Number(target.port || 5432),
    });
    gateway = await startGateway({ DATABASE_URL: proxy.through(database.url) });
  }, 120_000);
  afterAll(async () => {
    gateway?.process.child.kill('SIGKILL');
    await gateway?.process.exited;
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 unavailable with Retry-After while it is away, and 200 within seconds of its return', async () => {
    const me = `${gateway.base}/v1/me`;
    const ready = `${gateway.base}/health/ready`;
    expect((await status(me, gateway.key)).status).toBe(200);
    expect((await status(ready)).status).toBe(200);
    // An operator sees each check: the database and every upstream the installation talks to.
    expect((await status(ready, gateway.operatorKey)).body).toMatchObject({
      status: 'ok',
      checks: {
        database: { status: 'ok' },
        certificate: { status: 'ok' },
        upstream: { status: 'ok', detail: expect.stringMatching(/GET \/brands answered 200/) },
        cardUpstream: { status: 'ok', detail: expect.stringMatching(/^GET \/ answered \d{3}/) },
        posUpstream: { status: 'ok', detail: expect.stringMatching(/^GET \/ answered \d{3}/) },
      },
    });

    await proxy.cut();
    // The key cache trusts nothing once its listener is lost: authentication itself needs the database.
    await eventually(
      async () => (await status(me, gateway.key)).status === 503,
      10_000,
      '503 while away',
    );
    const away = await status(me, gateway.key);
    expect(away).toMatchObject({
      status: 503,
      body: { type: 'urn:portico:problem:unavailable', status: 503 },
    });
    expect(Number(away.retryAfter)).toBeGreaterThan(0);
    // A load balancer's probe (no key: authenticating one would need the database) takes the replica out.
    const readiness = await status(ready);
    expect(readiness).toMatchObject({ status: 503, body: { status: 'fail' } });

    // Away for a while: every pool and the key listener keep failing to reconnect, and the process stays up.
    await sleep(4000);
    expect(alive(gateway.process)).toBe(true);
    expect((await status(me, gateway.key)).status).toBe(503);

    await proxy.restore();
    const backInMs = await eventually(
      async () => (await status(me, gateway.key)).status === 200,
      15_000,
      '200 after the database came back',
    );
    expect(backInMs).toBeLessThan(15_000);
    await eventually(async () => (await status(ready)).status === 200, 5_000, 'ready again');
    expect(alive(gateway.process)).toBe(true);
    expectNoCrashTrace(gateway.process);
  }, 90_000);

  (process.env.DATABASE_URL ? it : it.skip)(
    'stays up when every one of its sessions is terminated, and answers 200 within seconds',
    async () => {
      const me = `${gateway.base}/v1/me`;
      expect((await status(me, gateway.key)).status).toBe(200);
      const admin = new URL(database.url);
      const name = admin.pathname.slice(1);
      admin.pathname = '/postgres';
      for (let round = 0; round < 3; round++) {
        expect(await terminateSessions(admin.toString(), name)).toBeGreaterThan(0);
        await sleep(300);
        expect(alive(gateway.process)).toBe(true);
        await eventually(
          async () => (await status(me, gateway.key)).status === 200,
          10_000,
          '200 again',
        );
      }
      expectNoCrashTrace(gateway.process);
    },
    60_000,
  );
});

(process.env.DATABASE_URL ? describe.skip : describe)('the embedded engine dying', () => {
  let dataDir: string;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    dataDir = join(mkdtempSync(join(tmpdir(), 'portico-engine-')), 'pglite');
    gateway = await startGateway({ EMBEDDED_DB_DIR: dataDir });
  }, 120_000);
  afterAll(async () => {
    gateway?.process.child.kill('SIGTERM');
    await gateway?.process.exited;
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  });

  it('is restarted by the gateway on the same data directory, which answers 200 again within seconds', async () => {
    const me = `${gateway.base}/v1/me`;
    expect((await status(me, gateway.key)).status).toBe(200);
    const info = JSON.parse(readFileSync(`${dataDir}.server.json`, 'utf8')) as {
      pid: number;
      port: number;
    };
    process.kill(info.pid, 'SIGKILL');

    await gateway.process.waitFor(/embedded PostgreSQL \(PGlite\) stopped unexpectedly/, 10_000);
    await gateway.process.waitFor(/embedded PostgreSQL \(PGlite\) restarted/, 30_000);
    // The same data: the key issued before the engine died still authenticates.
    const backInMs = await eventually(
      async () => (await status(me, gateway.key)).status === 200,
      15_000,
      '200 again',
    );
    expect(backInMs).toBeLessThan(15_000);
    const restarted = JSON.parse(readFileSync(`${dataDir}.server.json`, 'utf8')) as {
      pid: number;
      port: number;
    };
    expect(restarted.port).toBe(info.port);
    expect(restarted.pid).not.toBe(info.pid);
    expect(alive(gateway.process)).toBe(true);
    expectNoCrashTrace(gateway.process);
  }, 90_000);

  it('outlives a group SIGTERM until the gateway has stopped (the gateway exits 0 and cleanly)', async () => {
    const info = JSON.parse(readFileSync(`${dataDir}.server.json`, 'utf8')) as { pid: number };
    // A terminal's Ctrl-C or a group stop reaches the engine too; it waits for its parent's word.
    process.kill(info.pid, 'SIGTERM');
    await sleep(500);
    expect(() => process.kill(info.pid, 0)).not.toThrow();
    expect((await status(`${gateway.base}/v1/me`, gateway.key)).status).toBe(200);
    gateway.process.child.kill('SIGTERM');
    expect((await gateway.process.exited).code).toBe(0);
    await eventually(
      async () => {
        try {
          process.kill(info.pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      10_000,
      'the engine stopped with the gateway',
    );
    expectNoCrashTrace(gateway.process);
  }, 60_000);
});

(process.env.DATABASE_URL && privatePostgresAvailable ? describe : describe.skip)(
  'a PostgreSQL restart',
  () => {
    let server: PrivatePostgres;
    let gateway: Awaited<ReturnType<typeof startGateway>>;
    beforeAll(async () => {
      server = PrivatePostgres.start(await freePort());
      gateway = await startGateway({ DATABASE_URL: server.url });
    }, 120_000);
    afterAll(async () => {
      gateway?.process.child.kill('SIGKILL');
      await gateway?.process.exited;
      server?.stop();
    });

    it('leaves the gateway up, answering 200 within seconds of the server being back', async () => {
      const me = `${gateway.base}/v1/me`;
      expect((await status(me, gateway.key)).status).toBe(200);
      server.restart();
      const backInMs = await eventually(
        async () => (await status(me, gateway.key)).status === 200,
        15_000,
        '200 after the restart',
      );
      expect(backInMs).toBeLessThan(15_000);
      await eventually(
        async () => (await status(`${gateway.base}/health/ready`)).status === 200,
        5_000,
        'ready',
      );
      expect(alive(gateway.process)).toBe(true);
      expectNoCrashTrace(gateway.process);
    }, 90_000);
  },
);
