import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '#src/platform/config/app-config.js';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { ownDatabase } from './own-database.js';
import { freePort, startProcess, type RunningProcess } from './processes.js';
import { testEnv } from './test-gateway.js';

/**
 * A gateway process (to kill -9) on its own database, PostgreSQL or the embedded engine, against a
 * sandbox of the test's process, with reconciliation's schedule set by each start: the kill -9 tests
 * of reconciliation runs.
 */
export class ReconciliationProcess {
  sandbox!: RunningSandbox;
  gateway: RunningProcess | undefined;
  port!: number;
  private database!: { env: Record<string, string>; url(): Promise<string>; drop(): Promise<void> };

  /** `label` names its database (letters, digits and `_`); `env` is every start's own. */
  constructor(
    private readonly label: string,
    private readonly env: Record<string, string>,
  ) {}

  async open(): Promise<void> {
    this.sandbox = await startSandbox({
      ...loadConfig(testEnv()).sandbox,
      openBankingPort: 0,
      scaPort: 0,
      cardPort: 0,
      posPort: 0,
    });
    this.port = await freePort();
    if (process.env.DATABASE_URL) {
      const own = await ownDatabase(this.label);
      this.database = { env: { DATABASE_URL: own.url }, url: async () => own.url, drop: own.drop };
    } else {
      const dataDir = join(mkdtempSync(join(tmpdir(), `portico-${this.label}-`)), 'pglite');
      this.database = {
        env: { EMBEDDED_DB_DIR: dataDir },
        // Joins the engine the running gateway owns.
        url: async () => (await startEmbeddedPostgres(dataDir)).url,
        drop: async () => rmSync(dirname(dataDir), { recursive: true, force: true }),
      };
    }
  }

  /** Starts a gateway process with reconciliation every `intervalMs` ('0': off); answers the demo key. */
  async start(intervalMs = '1000'): Promise<string> {
    const sandbox = this.sandbox;
    this.gateway = startProcess('dist/main.js', [], {
      ...this.database.env,
      PORT: String(this.port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${this.port}`,
      UPSTREAM_OB_BASE_URL: sandbox.openBankingUrl,
      UPSTREAM_CARD_BASE_URL: sandbox.cardUrl,
      UPSTREAM_POS_BASE_URL: sandbox.posUrl,
      SANDBOX_SCA_PUBLIC_URL: sandbox.scaUrl,
      RESOLVER_INTERVAL_MS: '0',
      RECONCILIATION_INTERVAL_MS: intervalMs,
      RECONCILIATION_RECENT_DAYS: '1',
      LOG_LEVEL: 'warn',
      ...this.env,
    });
    return (
      await this.gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/, 90_000)
    )[1]!;
  }

  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: await this.database.url() });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  async until(condition: () => Promise<boolean>, limitMs: number): Promise<void> {
    for (const end = Date.now() + limitMs; !(await condition()); await sleep(50))
      if (Date.now() > end) throw new Error('condition not reached');
  }

  async close(): Promise<void> {
    this.gateway?.child.kill('SIGTERM');
    await this.gateway?.exited;
    await this.sandbox?.close();
    await this.database?.drop();
  }
}
