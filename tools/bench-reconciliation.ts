// `npm run bench:reconciliation`: reconciling one day of card payments (docs/reconciliation.md), its time
// and provider requests. One gateway process on PostgreSQL (a private cluster) or the embedded engine, the
// sandbox in this process; PAYMENTS payments made in the merchant's dashboard at the provider, then the
// day run twice on demand: the first run adopts every payment (none is Portico's), the second finds every
// one matched (a clean day). The provider-call rate is raised so that Portico's own cost is measured; at
// the default RECONCILIATION_REQUESTS_PER_SECOND the rate, not Portico, bounds a run (its floor printed).
//
//   npm run bench:reconciliation                         10,000 payments on PostgreSQL
//   npm run bench:reconciliation -- --engine embedded    on the embedded engine
//   npm run bench:reconciliation -- --payments 2000      fewer
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import type { RunningSandbox } from '#src/sandbox/sandbox.js';
import {
  freePort,
  openDatabase,
  query,
  Replica,
  startSoakSandbox,
  tempDir,
  type Engine,
} from './soak/rig.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
};
const ENGINE = option('engine', 'postgres') as Engine;
const PAYMENTS = Number(option('payments', '10000'));
const BY_ID = Number(option('by-id', '1000'));
/** The default of RECONCILIATION_REQUESTS_PER_SECOND (app-config.ts), for the floor a run has at it. */
const DEFAULT_RATE = 5;
const log = (line: string) =>
  process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A payment initiation as an app makes it (the sandbox's bank answers `RCVD`, awaiting SCA). */
const PAYMENT = {
  brandId: 'danube-bank',
  paymentProduct: 'domestic-credit-transfers',
  payment: {
    instructedAmount: { currency: 'HUF', amount: '15000.00' },
    creditorName: 'Kovacs Peter',
    creditorAccount: { iban: 'HU42117730161111101800000000' },
    creditorType: 'INDIVIDUAL',
    remittanceInformationUnstructured: 'Reconciliation bench',
  },
  redirectUri: 'https://app.example/done',
  nokRedirectUri: 'https://app.example/failed',
};

async function post(
  url: string,
  body: unknown,
  key?: string,
  method: 'POST' | 'PATCH' = 'POST',
): Promise<Json> {
  const response = await request(url, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() } : {}),
    },
    body: JSON.stringify(body),
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const answer = (response.statusCode === 204 ? {} : await response.body.json()) as Json;
  if (response.statusCode >= 300)
    throw new Error(`${url}: ${response.statusCode} ${JSON.stringify(answer)}`);
  return answer;
}

/** The bench's gateway, its sandbox and database, and the tenant whose day is reconciled. */
interface Bench {
  base: string;
  operatorKey: string;
  tenantId: string;
  sandbox: RunningSandbox;
  databaseUrl: () => Promise<string>;
}

/** One on-demand run of the tenant's day (one facade request), timed. */
async function reconcileDay(bench: Bench, day: string, capability: string) {
  const started = performance.now();
  const run = await post(
    `${bench.base}/v1/reconciliation/runs`,
    { tenantId: bench.tenantId, from: day, to: day, capability },
    bench.operatorKey,
  );
  if (run.status !== 'succeeded') throw new Error(`run ${run.status}: ${JSON.stringify(run)}`);
  return {
    requests: run.requests as number,
    wallMs: performance.now() - started,
    counts: run.counts as Record<string, number>,
  };
}

/** PAYMENTS card payments made in the merchant's dashboard, the day reconciled twice: its table rows. */
async function cardDay(bench: Bench): Promise<string[]> {
  const credentials = await request(`${bench.base}/v1/tenants/${bench.tenantId}/card-credentials`, {
    headers: { authorization: `Bearer ${bench.operatorKey}` },
  });
  const { merchantId } = (await credentials.body.json()) as { merchantId: string };
  const made = performance.now();
  const control = `${bench.sandbox.scaUrl}/sandbox/card/merchants/${merchantId}/dashboard/payments`;
  for (let i = 0; i < PAYMENTS; i++) await post(control, { amount: 1_000 + (i % 500) });
  log(
    `${PAYMENTS} payments made in the dashboard in ${((performance.now() - made) / 1000).toFixed(1)} s`,
  );
  const clock = await request(`${bench.sandbox.scaUrl}/sandbox/card/clock`);
  const day = ((await clock.body.json()) as { now: string }).now.slice(0, 10);
  const rows: string[] = [];
  for (const label of [
    'first run: every payment adopted',
    'second run: a clean day, every payment matched',
  ]) {
    const { requests, wallMs, counts } = await reconcileDay(bench, day, 'card');
    rows.push(
      `| ${ENGINE} | ${label} | ${PAYMENTS} | ${(wallMs / 1000).toFixed(1)} s | ${requests} | ${(PAYMENTS / (wallMs / 1000)).toFixed(0)} | ${counts.adopted} / ${counts.matched} | ${(requests / DEFAULT_RATE / 60).toFixed(1)} min |`,
    );
    log(`${label}: ${(wallMs / 1000).toFixed(1)} s, ${requests} requests`);
  }
  return rows;
}

/**
 * BY_ID open-banking payments initiated through Portico (not final: `RCVD`), a tenth settled at the
 * bank's back office, the day reconciled twice by id: its table rows.
 */
async function openBankingDay(bench: Bench): Promise<string[]> {
  const app = await post(
    `${bench.base}/v1/tenants/${bench.tenantId}/api-keys`,
    { role: 'app' },
    bench.operatorKey,
  );
  const made = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < BY_ID; i++)
    ids.push((await post(`${bench.base}/v1/payments`, PAYMENT, app.key as string)).paymentId);
  const settled = await query<{ bank: string }>(
    await bench.databaseUrl(),
    'SELECT upstream_payment_id AS bank FROM payments WHERE id = ANY($1::uuid[])',
    [ids.slice(0, Math.ceil(BY_ID / 10))],
  );
  for (const { bank } of settled)
    await post(
      `${bench.sandbox.scaUrl}/sandbox/payments/${bank}`,
      { status: 'ACSC' },
      undefined,
      'PATCH',
    );
  log(
    `${BY_ID} payments initiated, ${settled.length} settled at the bank, in ${((performance.now() - made) / 1000).toFixed(1)} s`,
  );
  const day = new Date().toISOString().slice(0, 10);
  const rows: string[] = [];
  for (const label of [
    `first run: ${settled.length} settled at the bank moved, the rest matched`,
    'second run: a clean day',
  ]) {
    const { requests, wallMs, counts } = await reconcileDay(bench, day, 'open-banking');
    rows.push(
      `| ${ENGINE} | ${label} | ${(wallMs / 1000).toFixed(1)} s | ${requests} | ${(requests / (wallMs / 1000)).toFixed(0)} | ${counts.moved} / ${counts.matched} | ${(requests / DEFAULT_RATE / 60).toFixed(1)} min |`,
    );
    log(`${label}: ${(wallMs / 1000).toFixed(1)} s, ${requests} requests`);
  }
  return rows;
}

async function main(): Promise<void> {
  if (!['postgres', 'embedded'].includes(ENGINE) || !(PAYMENTS >= 0) || !(BY_ID >= 0)) {
    process.stderr.write(
      'usage: npm run bench:reconciliation -- [--engine postgres|embedded] [--payments N] [--by-id N]\n',
    );
    process.exit(2);
  }
  const dir = tempDir();
  const database = await openDatabase(ENGINE, dir.path);
  const sandbox = await startSoakSandbox();
  const gateway = new Replica('gateway', await freePort(), {
    ...database.env,
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    UPSTREAM_OB_BASE_URL: sandbox.openBankingUrl,
    UPSTREAM_CARD_BASE_URL: sandbox.cardUrl,
    UPSTREAM_POS_BASE_URL: sandbox.posUrl,
    SANDBOX_SCA_PUBLIC_URL: sandbox.scaUrl,
    LOG_LEVEL: 'warn',
    RECONCILIATION_INTERVAL_MS: '0',
    RECONCILIATION_REQUESTS_PER_SECOND: '1000',
    // The payments initiated for the reads by id come faster than an app's key may make them.
    RATE_LIMIT_PER_MINUTE: '1000000',
    PROVIDER_SYNC_INTERVAL_MS: '0',
  });
  try {
    const operatorKey = await gateway.start();
    const tenant = await post(
      `${gateway.base}/v1/tenants`,
      { slug: `bench-${randomUUID().slice(0, 6)}`, name: 'Reconciliation bench' },
      operatorKey,
    );
    const bench: Bench = {
      base: gateway.base,
      operatorKey,
      tenantId: tenant.id,
      sandbox,
      databaseUrl: database.url,
    };
    const cardRows = PAYMENTS > 0 ? await cardDay(bench) : [];
    const byIdRows = BY_ID > 0 ? await openBankingDay(bench) : [];
    log(`load average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    if (cardRows.length > 0) {
      log(
        '\n| engine | run | payments | time | provider requests | payments/s | adopted / matched | floor at 5 requests/s |',
      );
      log('| --- | --- | --- | --- | --- | --- | --- | --- |');
      for (const row of cardRows) log(row);
    }
    if (byIdRows.length > 0) {
      log(
        `\n| engine | run (${BY_ID} open-banking payments not final, by id) | time | provider requests | reads/s | moved / matched | floor at 5 requests/s |`,
      );
      log('| --- | --- | --- | --- | --- | --- | --- |');
      for (const row of byIdRows) log(row);
    }
  } finally {
    await gateway.stop();
    await sandbox.close();
    database.close();
    dir.remove();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
