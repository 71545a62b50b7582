import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '#src/platform/config/app-config.js';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { until } from '../support/chaos.js';
import { consentRequest, domesticPayment } from '../support/fixtures.js';
import { freePort, startProcess, type RunningProcess } from '../support/processes.js';
import { approvedConsentOverHttp } from '../support/consent-flow.js';
import { ownDatabase } from '../support/own-database.js';
import { testEnv } from '../support/test-gateway.js';

const USER_PRESENT = { 'psu-ip-address': '192.0.2.10' };
const CARD = {
  cardNumber: '4556390755719395',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Grace Hopper',
  cvv: '321',
};

/**
 * The gateway as a real process on a database of its own (a fresh PostgreSQL database, or an embedded
 * engine in a data directory), talking to a sandbox in this process, so that kill -9 takes the gateway
 * (and an embedded engine with it) and leaves the bank and its call counts.
 */
class CrashRig {
  private gateway?: RunningProcess;
  key = '';
  readonly base: string;

  private constructor(
    readonly sandbox: RunningSandbox,
    private readonly port: number,
    private readonly database: CrashDatabase,
  ) {
    this.base = `http://127.0.0.1:${port}`;
  }

  static async create(): Promise<CrashRig> {
    const sandbox = await startSandbox({
      ...loadConfig(testEnv()).sandbox,
      openBankingPort: 0,
      scaPort: 0,
      cardPort: 0,
      posPort: 0,
    });
    return new CrashRig(sandbox, await freePort(), await crashDatabase());
  }

  async start(): Promise<void> {
    this.gateway = startProcess('dist/main.js', [], {
      ...this.database.env,
      PORT: String(this.port),
      PUBLIC_BASE_URL: this.base,
      UPSTREAM_OB_BASE_URL: this.sandbox.openBankingUrl,
      // The card API of the same sandbox; its control listener gives the demo tenant a merchant.
      UPSTREAM_CARD_BASE_URL: this.sandbox.cardUrl,
      SANDBOX_SCA_PUBLIC_URL: this.sandbox.scaUrl,
      UPSTREAM_DEADLINE_MS: '2000',
      UPSTREAM_RETRY_DELAYS_MS: 'none',
      RESOLVER_INTERVAL_MS: '500',
      RECONCILE_ON_START: 'true',
      LOG_LEVEL: 'warn',
    });
    const [, key] = await this.gateway.waitFor(
      /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
      90_000,
    );
    this.key = key;
  }

  async kill(): Promise<void> {
    const gateway = this.gateway!;
    gateway.child.kill('SIGKILL');
    expect((await gateway.exited).signal).toBe('SIGKILL');
    this.gateway = undefined;
  }

  async stop(): Promise<void> {
    if (!this.gateway) return;
    this.gateway.child.kill('SIGTERM');
    await this.gateway.exited;
    this.gateway = undefined;
  }

  call(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${this.key}`,
        'content-type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
    });
  }

  /** A query on the gateway's database, while the gateway runs. */
  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: await this.database.url() });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    await this.sandbox.close();
    await this.database.drop();
  }
}

/** The crash tests' database: on the embedded engine a data directory of their own, which each gateway process opens. */
interface CrashDatabase {
  env: Record<string, string>;
  url(): Promise<string>;
  drop(): Promise<void>;
}

async function crashDatabase(): Promise<CrashDatabase> {
  if (process.env.DATABASE_URL) {
    const database = await ownDatabase('crash');
    return {
      env: { DATABASE_URL: database.url },
      url: async () => database.url,
      drop: () => database.drop(),
    };
  }
  const dataDir = join(mkdtempSync(join(tmpdir(), 'portico-crash-')), 'pglite');
  return {
    env: { EMBEDDED_DB_DIR: dataDir },
    // Joins the engine the running gateway owns (two engines on one directory are never started).
    url: async () => (await startEmbeddedPostgres(dataDir)).url,
    drop: async () => rmSync(dirname(dataDir), { recursive: true, force: true }),
  };
}

describe('kill -9 of a gateway process', () => {
  let rig: CrashRig;
  let consentId: string;
  let accountId: string;
  beforeAll(async () => {
    rig = await CrashRig.create();
    await rig.start();
    ({ consentId, accountId } = await approvedConsentOverHttp((path, init) =>
      rig.call(path, init),
    ));
  }, 180_000);
  afterAll(() => rig.close());

  it('during a burst of reads leaves one access-log row per read the bank served, and no read unlogged', async () => {
    // The bank serves each read at once and answers 200 ms later: at any moment reads are in flight.
    rig.sandbox.chaos.add({ operation: 'getBalances', fault: 'delay', delayMs: 200 });
    let answered = 0;
    let stopped = false;
    const reader = async () => {
      while (!stopped) {
        const read = await rig
          .call(`/v1/accounts/${accountId}/balances`, {
            headers: { 'consent-id': consentId, ...USER_PRESENT },
          })
          .catch(() => undefined);
        if (!read) return;
        await read.arrayBuffer();
        expect(read.status).toBe(200);
        answered++;
      }
    };
    const readers = Array.from({ length: 16 }, reader);
    await until(() => answered >= 50, 60_000);
    await rig.kill();
    stopped = true;
    await Promise.all(readers);
    rig.sandbox.chaos.clear();
    // Reads the bank took before the kill finish there; nothing new can arrive.
    await sleep(500);
    const served = rig.sandbox.bank.control.requestIds('getBalances');

    await rig.start();
    const rows = await rig.query<{ request_id: string; outcome: string }>(
      `SELECT request_id, outcome FROM access_log WHERE consent_id = $1 AND operation = 'getAccountBalances'`,
      [consentId],
    );
    const logged = new Map(rows.map((row) => [row.request_id, row.outcome]));
    expect(logged.size).toBe(rows.length);
    // Every read the bank served has its row: written before the bank was called.
    expect(served.filter((id) => !logged.has(id))).toEqual([]);
    // Rows the bank never saw are reads the kill cut off before they were sent: still `sent`.
    const neverServed = rows.filter((row) => !served.includes(row.request_id));
    // (There may be none: the kill may find every read at the bank.)
    expect(neverServed.filter((row) => row.outcome !== 'sent')).toEqual([]);
    // Reads in flight at the kill: served by the bank, their answer lost with the process.
    const cutOff = rows.filter((row) => row.outcome === 'sent' && served.includes(row.request_id));
    expect(cutOff.length).toBeGreaterThan(0);
    expect(rows.length - neverServed.length).toBe(served.length);
    process.stdout.write(
      `crash during reads: the app got ${answered} answers, the bank served ${served.length}, ` +
        `the log holds ${rows.length} (${cutOff.length} served but cut off, ${neverServed.length} never sent)\n`,
    );
  }, 180_000);

  it('during creations leaves no row stuck, never fails what the bank may have, and never sends a retry twice', async () => {
    for (const operation of ['createConsent', 'initiatePayment'])
      rig.sandbox.chaos.add({ operation, fault: 'delay', delayMs: 5000, times: 2 });
    const calls = () => rig.sandbox.bank.control.calls();
    const before = calls();
    const keys = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const creations = [
      ['/v1/consents', consentRequest()],
      ['/v1/consents', consentRequest()],
      ['/v1/payments', domesticPayment()],
      ['/v1/payments', domesticPayment()],
    ].map(([path, body], i) =>
      rig
        .call(path as string, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { 'idempotency-key': keys[i] },
        })
        .catch(() => undefined),
    );
    await until(
      () =>
        (calls().createConsent ?? 0) - (before.createConsent ?? 0) === 2 &&
        (calls().initiatePayment ?? 0) - (before.initiatePayment ?? 0) === 2,
      30_000,
    );
    await rig.kill();
    await Promise.all(creations);
    rig.sandbox.chaos.clear();
    const atKill = calls();

    await rig.start();
    // The resolver (every 500 ms, for rows older than the 2 s deadline) works the rows the kill left.
    const stuck = () =>
      rig.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM consents WHERE status = 'creating') +
                 (SELECT count(*) FROM payments WHERE status = 'creating'))::int AS n`,
      );
    for (let waited = 0; (await stuck())[0].n > 0; waited += 250) {
      if (waited > 30_000) throw new Error('rows still creating after 30 s');
      await sleep(250);
    }
    const consents = await rig.query<{ status: string; upstream_consent_id: string | null }>(
      `SELECT status, upstream_consent_id FROM consents WHERE status NOT IN ('valid')`,
    );
    const payments = await rig.query<{ status: string; upstream_payment_id: string | null }>(
      `SELECT status, upstream_payment_id FROM payments`,
    );
    // The bank took all four; their answers died with the process. Berlin Group offers no lookup
    // without the bank's id, so they stay in doubt (visible to app and auditor), never failed.
    expect(consents.map((c) => c.status)).toEqual(['unknown', 'unknown']);
    expect(payments.map((p) => p.status)).toEqual(['unknown', 'unknown']);

    // The app retries with the same keys: answered that the outcome is unknown, the bank not called.
    for (const [i, path] of [
      '/v1/consents',
      '/v1/consents',
      '/v1/payments',
      '/v1/payments',
    ].entries()) {
      const retry = await rig.call(path, {
        method: 'POST',
        body: JSON.stringify(i < 2 ? consentRequest() : domesticPayment()),
        headers: { 'idempotency-key': keys[i] },
      });
      expect(retry.status).toBe(409);
      expect(retry.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect(calls().createConsent).toBe(atKill.createConsent);
    expect(calls().initiatePayment).toBe(atKill.initiatePayment);
  }, 180_000);

  it('during a card payment, then settled by the resolver: the same key answers 201 with the Captured payment', async () => {
    // The provider makes the payment at once and answers 5 s later: the kill comes in between.
    rig.sandbox.chaos.add({ operation: 'createPayment', fault: 'delay', delayMs: 5000, times: 1 });
    const creations = () => rig.sandbox.card.callCounts().createPayment ?? 0;
    const before = creations();
    const key = randomUUID();
    const body = JSON.stringify({ amount: 5100, ...CARD, merchantRef: `crash-${key}` });
    const pay = () =>
      rig.call('/v1/card/payments', { method: 'POST', body, headers: { 'idempotency-key': key } });
    const cut = pay().catch(() => undefined);
    await until(() => creations() - before === 1, 30_000);
    await rig.kill();
    await cut;
    rig.sandbox.chaos.clear();
    const killedAt = Date.now();

    await rig.start();
    // The resolver (every 500 ms, rows older than the 2 s deadline) finds it by its merchant_ref.
    let answer = await pay();
    // In doubt until then: 409 with Retry-After (1 s while the claim may still be a live request's).
    while (answer.status === 409) {
      expect(answer.headers.get('retry-after')).toMatch(/^[15]$/);
      if (Date.now() - killedAt > 60_000) throw new Error('still in doubt 60 s after the kill');
      await sleep(250);
      answer = await pay();
    }
    const settledAfterMs = Date.now() - killedAt;
    expect(answer.status).toBe(201);
    expect(answer.headers.get('idempotent-replayed')).toBe('true');
    expect(await answer.json()).toMatchObject({
      status: 'Captured',
      amount: 5100,
      merchantRef: `crash-${key}`,
    });
    expect(creations() - before).toBe(1);
    const [row] = await rig.query<{ state: string }>(
      'SELECT state FROM idempotency_records WHERE key = $1',
      [key],
    );
    // The crash left the key in progress: the answer came from the settled payment, not a stored one.
    expect(row.state).toBe('in_progress');
    process.stdout.write(
      `crash during a card payment: the same key answered the Captured payment ${settledAfterMs} ms after the kill\n`,
    );
  }, 180_000);
});
