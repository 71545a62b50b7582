import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../support/chaos.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';

/** A gateway process with two workers on the port, in sandbox mode. */
const startTwoWorkers = (port: number, env: Record<string, string>) =>
  startProcess('dist/main.js', [], {
    ...env,
    ...FREE_SANDBOX_PORTS,
    GATEWAY_WORKERS: '2',
    PORT: String(port),
  });

/** A GET on a connection of its own (the primary hands each new connection to the next worker). */
function getOnNewConnection(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request(
      url,
      { agent: false, headers: { authorization: `Bearer ${key}` } },
      (answer) => {
        answer.resume();
        answer.on('end', () => resolve(answer.statusCode ?? 0));
      },
    );
    call.on('error', reject);
    call.end();
  });
}

/** The pids of the workers that logged that they listen, by worker index (the latest per index). */
function listeningWorkers(gateway: RunningProcess): Map<number, number> {
  const workers = new Map<number, number>();
  for (const line of gateway.stdout().split('\n')) {
    if (!line.includes('"gateway worker listening"')) continue;
    const entry = JSON.parse(line) as { worker: number; pid: number };
    workers.set(entry.worker, entry.pid);
  }
  return workers;
}

// GATEWAY_WORKERS=2: one primary (engine, sandbox, /metrics), two workers sharing the port.
describe('the gateway with several workers', () => {
  let gateway: RunningProcess;
  let port: number;
  let key: string;
  let metricsUrl: string;
  let own: OwnDatabase | undefined;
  let database: Record<string, string>;
  beforeAll(async () => {
    port = await freePort();
    // PostgreSQL: a database of its own (the in-process sandbox keeps its state there too); embedded:
    // a data directory of its own, whose engine the primary starts and the workers connect to. Either
    // way the kept sandbox keys go beside that directory (not into the checkout's ./data).
    const dataDir = join(mkdtempSync(join(tmpdir(), 'portico-workers-')), 'pglite');
    if (process.env.DATABASE_URL) {
      own = await ownDatabase('workers');
      database = { DATABASE_URL: own.url, EMBEDDED_DB_DIR: dataDir };
    } else database = { EMBEDDED_DB_DIR: dataDir };
    gateway = startTwoWorkers(port, database);
    await gateway.waitFor(/Portico is ready \(sandbox mode, 2 workers\) in \d+ ms/, 90_000);
    [, key] = await gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/);
    [, metricsUrl] = await gateway.waitFor(/Metrics: +(http:\/\/127\.0\.0\.1:\d+\/metrics)/);
  }, 120_000);
  afterAll(async () => {
    if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
    await gateway.exited;
    await own?.drop();
  });

  it('serves the port from both workers, and /metrics counts the requests of both', async () => {
    // The primary hands each new connection to a worker that is free: one after another, both serve.
    const completed = () =>
      gateway
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"request completed"') && line.includes('"/v1/me"'))
        .map((line) => JSON.parse(line) as { worker: number });
    const servedBy = () => new Set(completed().map((entry) => entry.worker));
    let requests = 0;
    while (servedBy().size < 2 && requests < 50) {
      expect(await getOnNewConnection(`http://127.0.0.1:${port}/v1/me`, key)).toBe(200);
      requests++;
      await until(() => completed().length === requests);
    }
    expect([...servedBy()].sort()).toEqual([0, 1]);
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(
      new RegExp(
        `^portico_http_requests_total\\{[^}]*route="/v1/me"[^}]*status="200"[^}]*\\} ${requests}$`,
        'm',
      ),
    );
  });

  it('starts another worker when one is killed (kill -9), and keeps serving meanwhile', async () => {
    const before = listeningWorkers(gateway);
    expect(before.size).toBe(2);
    process.kill(before.get(1) as number, 'SIGKILL');
    await gateway.waitFor(/"gateway worker died; starting another"/, 10_000);
    expect(await getOnNewConnection(`http://127.0.0.1:${port}/v1/me`, key)).toBe(200);
    await until(() => {
      const pid = listeningWorkers(gateway).get(1);
      return pid !== undefined && pid !== before.get(1);
    }, 30_000);
    // The demo key printed at start still works: a replacement does not issue the keys again.
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () => getOnNewConnection(`http://127.0.0.1:${port}/v1/me`, key)),
    );
    expect(statuses).toEqual(Array(6).fill(200));
  });

  it('stops the workers and itself on SIGTERM', async () => {
    const workers = [...listeningWorkers(gateway).values()];
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('prints the same demo key at the next start: the worker that issued it kept it beside the data directory', async () => {
    const again = startTwoWorkers(port, database);
    try {
      const [, keyAgain] = await again.waitFor(
        /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
        90_000,
      );
      expect(keyAgain).toBe(key);
      expect(await getOnNewConnection(`http://127.0.0.1:${port}/v1/me`, keyAgain)).toBe(200);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 120_000);
});

describe('the gateway with several workers that cannot start', () => {
  const quiet = () => ({
    ...(process.env.DATABASE_URL
      ? { DATABASE_URL: process.env.PORTICO_TEST_DATABASE_URL as string }
      : { EMBEDDED_DB_DIR: 'memory://' }),
    UPSTREAM_OB_BASE_URL: 'https://127.0.0.1:9',
  });

  it('stops with exit code 1 when its workers cannot listen, and says why', async () => {
    // An address of no interface here (TEST-NET-1): free as far as the start's port check can tell,
    // the workers' listen then fails (EADDRNOTAVAIL). Nothing is sent to it.
    const gateway = startTwoWorkers(await freePort(), { ...quiet(), HOST: '192.0.2.1' });
    expect((await gateway.exited).code).toBe(1);
    expect(gateway.stderr()).toContain('EADDRNOTAVAIL');
    expect(gateway.stdout()).toMatch(/"stopping: the gateway workers cannot run"/);
    expect(gateway.stdout()).not.toContain('Portico is ready');
  }, 90_000);

  it('refuses a taken port before it starts any worker, naming the variable that moves it', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const gateway = startTwoWorkers(port, quiet());
      expect((await gateway.exited).code).toBe(1);
      expect(gateway.stderr()).toContain(
        `port ${port} on 127.0.0.1 is already in use (EADDRINUSE)`,
      );
      expect(gateway.stderr()).toContain('PORT=<another port>');
      expect(gateway.stdout()).not.toContain('gateway worker');
    } finally {
      taken.close();
    }
  }, 90_000);
});
