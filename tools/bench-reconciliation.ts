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
import {
  freePort,
  openDatabase,
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
/** The default of RECONCILIATION_REQUESTS_PER_SECOND (app-config.ts), for the floor a run has at it. */
const DEFAULT_RATE = 5;
const log = (line: string) =>
  process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function post(url: string, body: unknown, key?: string): Promise<Json> {
  const response = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify(body),
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const answer = (await response.body.json()) as Json;
  if (response.statusCode >= 300)
    throw new Error(`${url}: ${response.statusCode} ${JSON.stringify(answer)}`);
  return answer;
}

async function main(): Promise<void> {
  if (!['postgres', 'embedded'].includes(ENGINE) || !(PAYMENTS > 0)) {
    process.stderr.write(
      'usage: npm run bench:reconciliation -- [--engine postgres|embedded] [--payments N]\n',
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
    PROVIDER_SYNC_INTERVAL_MS: '0',
  });
  try {
    const operatorKey = await gateway.start();
    const tenant = await post(
      `${gateway.base}/v1/tenants`,
      { slug: `bench-${randomUUID().slice(0, 6)}`, name: 'Reconciliation bench' },
      operatorKey,
    );
    const credentials = await request(`${gateway.base}/v1/tenants/${tenant.id}/card-credentials`, {
      headers: { authorization: `Bearer ${operatorKey}` },
    });
    const { merchantId } = (await credentials.body.json()) as { merchantId: string };
    const made = performance.now();
    const control = `${sandbox.scaUrl}/sandbox/card/merchants/${merchantId}/dashboard/payments`;
    for (let i = 0; i < PAYMENTS; i++) await post(control, { amount: 1_000 + (i % 500) });
    log(
      `${PAYMENTS} payments made in the dashboard in ${((performance.now() - made) / 1000).toFixed(1)} s`,
    );
    const clock = await request(`${sandbox.scaUrl}/sandbox/card/clock`);
    const day = ((await clock.body.json()) as { now: string }).now.slice(0, 10);

    const rows: string[] = [];
    for (const label of [
      'first run: every payment adopted',
      'second run: a clean day, every payment matched',
    ]) {
      const started = performance.now();
      const run = await post(
        `${gateway.base}/v1/reconciliation/runs`,
        { tenantId: tenant.id, from: day, to: day, capability: 'card' },
        operatorKey,
      );
      const wallMs = performance.now() - started;
      const counts = run.counts as Record<string, number>;
      if (run.status !== 'succeeded') throw new Error(`run ${run.status}: ${JSON.stringify(run)}`);
      rows.push(
        `| ${ENGINE} | ${label} | ${PAYMENTS} | ${(wallMs / 1000).toFixed(1)} s | ${run.requests} | ${(PAYMENTS / (wallMs / 1000)).toFixed(0)} | ${counts.adopted} / ${counts.matched} | ${(run.requests / DEFAULT_RATE / 60).toFixed(1)} min |`,
      );
      log(`${label}: ${(wallMs / 1000).toFixed(1)} s, ${run.requests} requests`);
    }
    log(`load average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    log(
      '\n| engine | run | payments | time | provider requests | payments/s | adopted / matched | floor at 5 requests/s |',
    );
    log('| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const row of rows) log(row);
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
