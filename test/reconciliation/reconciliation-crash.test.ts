import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { loadConfig } from '#src/platform/config/app-config.js';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ownDatabase } from '../support/own-database.js';
import { freePort, startProcess, type RunningProcess } from '../support/processes.js';
import { testEnv } from '../support/test-gateway.js';

/** Payments made in the merchant's dashboard: three pages of the provider's list. */
const PAYMENTS = 50;

/**
 * kill -9 of a gateway process in the middle of a reconciliation run (the scheduler's rolling window,
 * one provider call a second): the next process marks the run interrupted once its lease lapses, runs
 * the window again, and every payment made at the provider is adopted once.
 */
describe('reconciliation: kill -9 in the middle of a run', () => {
  let sandbox: RunningSandbox;
  let database: { env: Record<string, string>; url(): Promise<string>; drop(): Promise<void> };
  let gateway: RunningProcess | undefined;
  let port: number;

  const start = async (intervalMs = '1000') => {
    gateway = startProcess('dist/main.js', [], {
      ...database.env,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      UPSTREAM_OB_BASE_URL: sandbox.openBankingUrl,
      UPSTREAM_CARD_BASE_URL: sandbox.cardUrl,
      SANDBOX_SCA_PUBLIC_URL: sandbox.scaUrl,
      RESOLVER_INTERVAL_MS: '0',
      RECONCILIATION_INTERVAL_MS: intervalMs,
      RECONCILIATION_RECENT_DAYS: '1',
      RECONCILIATION_REQUESTS_PER_SECOND: '1',
      RECONCILIATION_LEASE_MS: '3000',
      LOG_LEVEL: 'warn',
    });
    await gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/, 90_000);
  };
  const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: await database.url() });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
  const adopted = async () =>
    Number(
      (
        await query<{ n: string }>(
          "SELECT count(*) AS n FROM provider_resources WHERE origin = 'provider' AND kind = 'payment'",
        )
      )[0].n,
    );

  const until = async (condition: () => Promise<boolean>, limitMs: number) => {
    for (const end = Date.now() + limitMs; !(await condition()); await sleep(50))
      if (Date.now() > end) throw new Error('condition not reached');
  };

  beforeAll(async () => {
    sandbox = await startSandbox({
      ...loadConfig(testEnv()).sandbox,
      openBankingPort: 0,
      scaPort: 0,
      cardPort: 0,
      posPort: 0,
    });
    port = await freePort();
    if (process.env.DATABASE_URL) {
      const own = await ownDatabase('recon_crash');
      database = { env: { DATABASE_URL: own.url }, url: async () => own.url, drop: own.drop };
    } else {
      const dataDir = join(mkdtempSync(join(tmpdir(), 'portico-recon-crash-')), 'pglite');
      database = {
        env: { EMBEDDED_DB_DIR: dataDir },
        // Joins the engine the running gateway owns.
        url: async () => (await startEmbeddedPostgres(dataDir)).url,
        drop: async () => rmSync(dirname(dataDir), { recursive: true, force: true }),
      };
    }
  }, 60_000);
  afterAll(async () => {
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await sandbox?.close();
    await database?.drop();
  });

  it('adopts every payment made at the provider once, the killed run interrupted and its window run again', async () => {
    // The demo tenant's merchant, given at the first start (reconciliation off), pays 50 times in its
    // dashboard; then the gateway runs with reconciliation on.
    await start('0');
    const [{ merchant_id: merchantId }] = await query<{ merchant_id: string }>(
      "SELECT c.merchant_id FROM card_credentials c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = 'demo'",
    );
    for (let n = 0; n < PAYMENTS; n++) {
      const made = await request(
        `${sandbox.scaUrl}/sandbox/card/merchants/${merchantId}/dashboard/payments`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount: 1_000 + n }),
        },
      );
      expect(made.statusCode).toBe(200);
      await made.body.dump();
    }
    gateway!.child.kill('SIGTERM');
    await gateway!.exited;
    await start();
    await until(async () => (await adopted()) > 0, 60_000);
    const atKill = await adopted();
    gateway!.child.kill('SIGKILL');
    expect((await gateway!.exited).signal).toBe('SIGKILL');
    gateway = undefined;
    expect(atKill).toBeLessThan(PAYMENTS);

    await start();
    await until(async () => {
      const done = await query(
        "SELECT 1 FROM reconciliation_runs WHERE capability = 'card' AND trigger = 'recent' AND status = 'succeeded'",
      );
      return done.length > 0;
    }, 90_000);
    const rows = await query<{ token: string; n: string; status: string }>(
      `SELECT token, count(*) AS n, min(status) AS status FROM provider_resources
        WHERE kind = 'payment' AND origin = 'provider' GROUP BY token`,
    );
    expect(rows).toHaveLength(PAYMENTS);
    expect(rows.every((row) => row.n === '1' && row.status === 'Captured')).toBe(true);
    const runs = await query<{ status: string }>(
      "SELECT status FROM reconciliation_runs WHERE capability = 'card' AND trigger = 'recent' ORDER BY started_at",
    );
    expect(runs.map((run) => run.status)).toContain('interrupted');
  }, 240_000);
});
