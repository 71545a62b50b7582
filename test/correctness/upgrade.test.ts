import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { domesticPayment } from '../support/fixtures.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  type RunningProcess,
  startProcess,
} from '../support/processes.js';

const MIGRATIONS_DIR = 'src/platform/database/migrations';
const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
const migrationFiles = (commit: string) =>
  git('ls-tree', '--name-only', `${commit}:${MIGRATIONS_DIR}`)
    .split('\n')
    .filter((file) => /^\d+-.+\.ts$/.test(file));

/**
 * The previous release as far as the schema goes: the parent of the newest commit that changed the list
 * of migrations, so that the current build always has migrations the previous one lacks.
 */
function previousRelease(): { commit: string; newMigrations: string[] } {
  const current = migrationFiles('HEAD');
  for (const commit of git('log', '--format=%H', '--', MIGRATIONS_DIR).split('\n')) {
    const before = migrationFiles(`${commit}^`);
    const added = current.filter((file) => !before.includes(file));
    if (added.length > 0) return { commit: `${commit}^`, newMigrations: added };
  }
  throw new Error('no commit in the history added a migration');
}

/** The previous release's sources from git, built with its own scripts/build.js into `dir`/dist. */
function buildRelease(commit: string, dir: string): void {
  const archive = join(dir, 'release.tar');
  git(
    'archive',
    '--output',
    archive,
    commit,
    'src',
    'scripts',
    'package.json',
    'openapi',
    'certs/make-dev-certs.sh',
  );
  execFileSync('tar', ['-xf', archive, '-C', dir]);
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, ['scripts/build.js', 'product'], { cwd: dir, stdio: 'ignore' });
}

interface Gateway {
  process: RunningProcess;
  base: string;
  key: string;
}

async function startGateway(script: string, env: Record<string, string>): Promise<Gateway> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gateway = startProcess(script, [], {
    ...FREE_SANDBOX_PORTS,
    ...env,
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  const [, key] = await gateway.waitFor(
    /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
    90_000,
  );
  return { process: gateway, base, key: key! };
}

async function stop(gateway: Gateway | undefined): Promise<void> {
  if (!gateway || gateway.process.child.exitCode !== null) return;
  gateway.process.child.kill('SIGTERM');
  await gateway.process.exited;
}

/** One app's round: initiate a payment, read it back, read who it is. Answers the statuses. */
async function round(gateway: Gateway): Promise<number[]> {
  const headers = { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' };
  const created = await fetch(`${gateway.base}/v1/payments`, {
    method: 'POST',
    headers: { ...headers, 'idempotency-key': randomUUID() },
    body: JSON.stringify(domesticPayment()),
  });
  const { paymentId } = (await created.json()) as { paymentId?: string };
  const statuses = [created.status];
  if (paymentId) {
    const read = await fetch(`${gateway.base}/v1/payments/${paymentId}`, { headers });
    await read.arrayBuffer();
    statuses.push(read.status);
  }
  const me = await fetch(`${gateway.base}/v1/me`, { headers });
  await me.arrayBuffer();
  statuses.push(me.status);
  return statuses;
}

/** Two loops of rounds against a gateway until stopped; statuses counted by the phase they ran in. */
class Traffic {
  private running = true;
  readonly statuses = new Map<string, number[]>();
  private readonly loops: Promise<void>[];

  constructor(
    private readonly gateway: Gateway,
    private readonly phase: () => string,
  ) {
    this.loops = [0, 1].map(() => this.loop());
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const phase = this.phase();
      const statuses = await round(this.gateway).catch(() => [0]);
      this.statuses.set(phase, [...(this.statuses.get(phase) ?? []), ...statuses]);
    }
  }

  async stop(): Promise<Map<string, number[]>> {
    this.running = false;
    await Promise.all(this.loops);
    return this.statuses;
  }
}

const byStatus = (statuses: number[] = []) =>
  statuses.reduce<Record<number, number>>((counts, status) => {
    counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  }, {});

const onPostgres = Boolean(process.env.DATABASE_URL);

describe('an upgrade beside the previous release', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-upgrade-'));
  const release = previousRelease();
  let database: OwnDatabase | undefined;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    buildRelease(release.commit, dir);
    if (onPostgres) database = await ownDatabase('upgrade', { empty: true });
  });

  afterAll(async () => {
    for (const gateway of gateways) await stop(gateway);
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  (onPostgres ? it : it.skip)(
    'serves from the previous build and the current one on one PostgreSQL database while the new migrations apply, neither answering 5xx',
    async () => {
      expect(release.newMigrations.length).toBeGreaterThan(0);
      const previous = await startGateway(join(dir, 'dist/main.js'), {
        DATABASE_URL: database!.url,
      });
      gateways.push(previous);
      let phase = 'before';
      const onPrevious = new Traffic(previous, () => phase);
      // The point: traffic on the previous release for a while (2 s) before the upgrade begins.
      await new Promise((done) => setTimeout(done, 2000));

      // The current build starts under that traffic and applies the migrations the previous one lacks.
      phase = 'during';
      const current = await startGateway('dist/main.js', { DATABASE_URL: database!.url });
      gateways.push(current);
      phase = 'after';
      const onCurrent = new Traffic(current, () => phase);
      // …and on both releases for 5 s after the current one has started.
      await new Promise((done) => setTimeout(done, 5000));
      const previousStatuses = await onPrevious.stop();
      const currentStatuses = await onCurrent.stop();

      const client = new pg.Client({ connectionString: database!.url });
      await client.connect();
      const { rows } = await client
        .query<{ name: string }>('SELECT name FROM schema_migrations')
        .finally(() => client.end());
      const applied = rows.map((row) => row.name);
      for (const file of release.newMigrations) {
        const [timestamp, ...name] = file.replace(/\.ts$/, '').split('-');
        expect(applied).toContain(`${name.join('')}${timestamp}`);
      }

      // Every answer a success (no 5xx, no refusal) from either build in any phase; a failure shows the
      // answers other than 2xx by build and phase.
      const failures = (statuses: Map<string, number[]>) =>
        Object.fromEntries(
          [...statuses]
            .map(([p, list]) => [p, byStatus(list.filter((s) => s < 200 || s >= 300))] as const)
            .filter(([, counts]) => Object.keys(counts).length > 0),
        );
      expect({ previous: failures(previousStatuses), current: failures(currentStatuses) }).toEqual({
        previous: {},
        current: {},
      });
      expect(previousStatuses.get('after')?.length ?? 0).toBeGreaterThan(10);
      expect(currentStatuses.get('after')?.length ?? 0).toBeGreaterThan(10);
      expect(previous.process.child.exitCode).toBeNull();
    },
    180_000,
  );

  (onPostgres ? it.skip : it)(
    'opens the previous build’s embedded data directory with the current build (stop, then start), its keys working',
    async () => {
      const dataDir = join(dir, 'pglite');
      const previous = await startGateway(join(dir, 'dist/main.js'), { EMBEDDED_DB_DIR: dataDir });
      gateways.push(previous);
      const statuses = await round(previous);
      expect(statuses).toEqual([201, 200, 200]);
      await stop(previous);
      expect(readdirSync(dataDir).length).toBeGreaterThan(0);

      const current = await startGateway('dist/main.js', { EMBEDDED_DB_DIR: dataDir });
      gateways.push(current);
      // The kept demo key still works: the tenants and keys came through the new migrations.
      expect(current.key).toBe(previous.key);
      expect(await round(current)).toEqual([201, 200, 200]);
    },
    180_000,
  );
});
