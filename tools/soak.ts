// `npm run soak`: the whole system under load and faults, then its invariants as a table (exit 1 on any
// violation). Two replicas on one private PostgreSQL cluster (or, --engine embedded, one gateway of two
// workers on the embedded engine), the sandbox in this process, webhook receivers, several tenants.
//
//   npm run soak                              3 minutes of load, then settling (the CI profile)
//   npm run soak -- --minutes 30              a long run
//   npm run soak -- --engine embedded         the embedded engine's profile
//   npm run soak -- --seed run-7              another draw of the chaos and the load's choices
//   npm run soak -- --tenants 3 --settle 90   tenants, and the settling period's limit in seconds
//   npm run soak -- --tamper                  also plants one violation of each kind: each must show
import { randomUUID, createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { drive, type SoakTenant } from './soak/drivers.js';
import { runFaults } from './soak/faults.js';
import { SoakHttp } from './soak/http.js';
import { checkAll, renderTable, type CheckResult, type Snapshot } from './soak/invariants.js';
import { collect } from './soak/collect.js';
import { Receiver, type ReceiverKind } from './soak/receivers.js';
import {
  freePort,
  openDatabase,
  query,
  Replica,
  startSoakSandbox,
  tempDir,
  type Engine,
} from './soak/rig.js';
import { plantViolations } from './soak/tamper.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
};
const MINUTES = Number(option('minutes', '3'));
const ENGINE = option('engine', 'postgres') as Engine;
const SEED = option('seed', 'soak');
const TENANTS = Number(option('tenants', '3'));
const SETTLE_S = Number(option('settle', '120'));
const TAMPER = argv.includes('--tamper');
if (!['postgres', 'embedded'].includes(ENGINE) || !(MINUTES > 0)) {
  process.stderr.write(
    'usage: npm run soak -- [--minutes N] [--engine postgres|embedded] [--seed S]\n',
  );
  process.exit(2);
}

const log = (line: string) =>
  process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** A deterministic random source from the seed (sha256 in counter mode). */
function seeded(seed: string): () => number {
  let counter = 0;
  return () =>
    createHash('sha256').update(`${seed}:${counter++}`).digest().readUInt32BE(0) / 2 ** 32;
}

const EVENT_TYPES = [
  'consent.status_changed',
  'payment.status_changed',
  'card_payment.status_changed',
  'card_refund.status_changed',
  'notification.status_changed',
  'iris_session.status_changed',
  'pos_transaction.status_changed',
];
/** How long a call may stay in flight (the longest deadline below, with room). */
const CALL_DEADLINE_MS = 20_000;

async function main(): Promise<number> {
  const dir = tempDir();
  const sandbox = await startSoakSandbox();
  const database = await openDatabase(ENGINE, dir.path);
  const receivers = await Promise.all(
    (['healthy', 'flaky', 'dead', 'removed'] as ReceiverKind[]).map((kind) => Receiver.open(kind)),
  );
  const env: Record<string, string> = {
    ...database.env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    UPSTREAM_OB_BASE_URL: sandbox.openBankingUrl,
    UPSTREAM_CARD_BASE_URL: sandbox.cardUrl,
    UPSTREAM_POS_BASE_URL: sandbox.posUrl,
    SANDBOX_SCA_PUBLIC_URL: sandbox.scaUrl,
    DATABASE_POOL_SIZE: '6',
    RATE_LIMIT_PER_MINUTE: '100000',
    UPSTREAM_DEADLINE_MS: '4000',
    UPSTREAM_HEADERS_TIMEOUT_MS: '4000',
    UPSTREAM_BODY_TIMEOUT_MS: '4000',
    UPSTREAM_POS_DEADLINE_MS: '15000',
    POS_SYNC_WAIT_MS: '8000',
    RESOLVER_INTERVAL_MS: '2000',
    // The scripted user authorises at once: a consent whose SCA link was lost is unusable after 30 s.
    RESOLVER_CONSENT_SCA_WINDOW_MS: '30000',
    RECONCILE_ON_START: 'true',
    AUDIT_CHECKPOINT_INTERVAL_MS: '15000',
    WEBHOOK_RETRY_SCHEDULE_MS: '1000,2000,4000',
    WEBHOOK_MAX_ATTEMPTS: '100',
    WEBHOOK_TIMEOUT_MS: '4000',
    WEBHOOK_LEASE_MS: '8000',
    WEBHOOK_PAUSE_AFTER_MS: '30000',
    ...(ENGINE === 'embedded' ? { GATEWAY_WORKERS: '2' } : {}),
  };
  // The replicas' output (LOG_LEVEL=warn) is kept for after the run.
  const logs = mkdtempSync(join(tmpdir(), 'portico-soak-logs-'));
  const replicas =
    ENGINE === 'postgres'
      ? [
          new Replica('replica-1', await freePort(), env, join(logs, 'replica-1.log')),
          new Replica('replica-2', await freePort(), env, join(logs, 'replica-2.log')),
        ]
      : [new Replica('gateway', await freePort(), env, join(logs, 'gateway.log'))];
  const http = new SoakHttp(() => replicas);
  const random = seeded(SEED);
  let cleaned: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaned ??= (async () => {
      for (const replica of replicas) await replica.stop().catch(() => undefined);
      await Promise.all(receivers.map((receiver) => receiver.close()));
      database.close();
      dir.remove();
      // The sandbox is not closed: connections a hang left open are dropped as the process exits.
    })());
  // Ctrl-C (or a CI timeout's SIGTERM) still stops the replicas and the private cluster.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: stopping the replicas and the database`);
      void cleanUp().finally(() => process.exit(130));
    });
  try {
    log(
      `soak: ${MINUTES} min of load on ${ENGINE}, ${replicas.length === 2 ? 'two replicas' : 'one gateway of two workers'}, ${TENANTS} tenants, seed ${SEED}`,
    );
    // One after the other: the second finds the first's sandbox keys kept and gives the same ones.
    let operatorKey = '';
    for (const replica of replicas) operatorKey = await replica.start();
    const operator = { slug: 'operations', key: operatorKey };
    const tenants: SoakTenant[] = [];
    const endpoints: { id: string; tenant: string; kind: ReceiverKind }[] = [];
    for (let i = 0; i < TENANTS; i++) {
      const slug = `soak-${i + 1}-${randomUUID().slice(0, 6)}`;
      const tenant = await http.call('setup', operator, 'POST', '/v1/tenants', {
        slug,
        name: `Soak ${i + 1}`,
      });
      const tenantId = tenant?.body.id as string;
      const issued = await http.call(
        'setup',
        operator,
        'POST',
        `/v1/tenants/${tenantId}/api-keys`,
        { role: 'app' },
      );
      const credentials = await http.call(
        'setup',
        operator,
        'GET',
        `/v1/tenants/${tenantId}/card-credentials`,
      );
      const merchantId = credentials?.body.merchantId as string;
      if (!tenantId || !issued?.body.key || !merchantId)
        throw new Error(
          `tenant setup failed: ${JSON.stringify([tenant?.body, issued?.body, credentials?.body])}`,
        );
      const [fast] = sandbox.pos.addTerminals(merchantId, {
        outcome: { action: 'approve' },
      } as never) as { token: string }[];
      const [slow] = sandbox.pos.addTerminals(merchantId, {
        outcome: { action: 'approve', afterMs: 3000 },
      } as never) as { token: string }[];
      const soakTenant: SoakTenant = {
        slug,
        id: tenantId,
        key: issued.body.key as string,
        merchantId,
        fastTerminal: fast.token,
        slowTerminal: slow.token,
        consents: [],
        sellers: [],
      };
      tenants.push(soakTenant);
      for (const receiver of receivers) {
        const endpoint = await http.call('setup', soakTenant, 'POST', '/v1/webhooks/endpoints', {
          url: receiver.url(slug),
          eventTypes: EVENT_TYPES,
        });
        if (endpoint?.status !== 201)
          throw new Error(`endpoint: ${JSON.stringify(endpoint?.body)}`);
        endpoints.push({ id: endpoint.body.id as string, tenant: slug, kind: receiver.kind });
      }
    }
    log(`setup: ${tenants.length} tenants, ${endpoints.length} webhook endpoints`);

    const loadMs = MINUTES * 60_000;
    const start = Date.now();
    const flaky = receivers.find((receiver) => receiver.kind === 'flaky')!;
    // Fails for less than WEBHOOK_PAUSE_AFTER_MS: a receiver failing longer is paused, by design.
    flaky.failUntil = start + Math.min(loadMs * 0.4, 15_000);
    const removeHalfway = (async () => {
      await sleep(loadMs / 2);
      for (const endpoint of endpoints.filter((e) => e.kind === 'removed')) {
        const tenant = tenants.find((t) => t.slug === endpoint.tenant)!;
        await http.call('setup', tenant, 'DELETE', `/v1/webhooks/endpoints/${endpoint.id}`);
      }
      log("the removed receivers' endpoints deleted");
    })();
    const ctx = { http, sandbox, replicas: () => replicas, random };
    const [, faultLog] = await Promise.all([
      drive(ctx, tenants, start + loadMs),
      runFaults(
        {
          sandbox,
          database,
          replicas,
          http,
          seed: SEED,
          embedded: ENGINE === 'embedded',
          start,
          loadMs,
        },
        log,
      ),
      removeHalfway,
    ]);
    log('load over; settling');

    const url = await database.url();
    const settleStart = Date.now();
    const healthy = endpoints
      .filter((e) => e.kind === 'healthy' || e.kind === 'flaky')
      .map((e) => e.id);
    for (;;) {
      const [{ doubt, pending }] = await query<{ doubt: string; pending: string }>(
        url,
        `SELECT (SELECT count(*) FROM consents WHERE status IN ('creating','unknown'))
              -- An open-banking payment without its bank id stays in doubt until its lifetime by
              -- design: the invariant judges it; waiting for it here only spends the settling period.
              + (SELECT count(*) FROM payments WHERE status IN ('creating','unknown') AND upstream_payment_id IS NOT NULL)
              + (SELECT count(*) FROM provider_resources WHERE status IN ('creating','unknown')) AS doubt,
                (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND endpoint_id = ANY($1)) AS pending`,
        [healthy],
      ).catch(() => [{ doubt: '?', pending: '?' }]);
      if (doubt === '0' && pending === '0') break;
      if (Date.now() - settleStart > SETTLE_S * 1000) {
        log(`settling period over: ${doubt} rows in doubt, ${pending} deliveries pending`);
        break;
      }
      await sleep(2000);
    }
    await finalReads(url, http, tenants);
    // Rows still `sent` are sealed once their call's deadline and the grace have passed.
    await sleep(Math.max(0, start + loadMs + CALL_DEADLINE_MS + 8000 - Date.now()));
    log(`settled in ${Math.round((Date.now() - settleStart) / 1000)} s; checking`);

    const snapshot = await collect({
      url,
      sandbox,
      tenants,
      endpoints,
      receivers,
      http,
      replicas,
      kills: faultLog.kills,
      clockMovedAt: faultLog.faults.find((fault) => fault.what.startsWith('sandbox clock moved'))
        ?.at,
    });
    const results = checkAll(snapshot);
    printRequests(http);
    process.stdout.write(
      `\nFaults:\n${faultLog.faults.map((f) => `  +${Math.round((f.at - start) / 1000)} s  ${f.what}`).join('\n')}\n\n`,
    );
    const table = renderTable(results);
    process.stdout.write(`Invariants (${ENGINE}, ${MINUTES} min, seed ${SEED}):\n${table.text}\n`);
    process.stdout.write(`The replicas' warnings and errors: ${logs}\n`);
    if (TAMPER) return tamperVerdict(snapshot, results);
    return table.ok ? 0 : 1;
  } finally {
    await cleanUp();
  }
}

/**
 * The bank pushes nothing: a consent or payment whose SCA return was lost under a fault is brought up
 * to date when the app next reads it. Each is read once through the facade, as an app resuming does,
 * before Portico's record is compared with the bank's.
 */
async function finalReads(url: string, http: SoakHttp, tenants: SoakTenant[]): Promise<void> {
  const rows = await query<{ id: string; tenant_id: string; path: string }>(
    url,
    `SELECT id, tenant_id, CASE kind WHEN 'ais' THEN '/v1/consents/' || id
                                     ELSE '/v1/funds-confirmation-consents/' || id || '/status' END AS path
       FROM consents WHERE upstream_consent_id IS NOT NULL AND status NOT IN ('creating', 'unknown', 'failed')
     UNION ALL
     SELECT id, tenant_id, '/v1/payments/' || id || '/status' FROM payments
      WHERE upstream_payment_id IS NOT NULL AND status NOT IN ('creating', 'unknown', 'failed')`,
  );
  const queue = [...rows];
  await Promise.all(
    [1, 2, 3, 4].map(async () => {
      for (let row = queue.shift(); row; row = queue.shift()) {
        const tenant = tenants.find((t) => t.id === row!.tenant_id);
        if (tenant) await http.call('final reads (open banking)', tenant, 'GET', row.path);
      }
    }),
  );
  log(`final reads: ${rows.length} consents and payments read once through the facade`);
}

function printRequests(http: SoakHttp): void {
  const rows = [...http.tallies].filter(([name]) => name !== 'setup');
  const width = Math.max(10, ...rows.map(([name]) => name.length));
  const lines = [
    `| ${'capability'.padEnd(width)} | requests |     2xx/3xx | 502/503/504, cut | 4xx | 500 |`,
  ];
  lines.push(`| ${'-'.repeat(width)} | -------- | ----------- | ---------------- | --- | --- |`);
  for (const [name, t] of rows.sort(([a], [b]) => a.localeCompare(b)))
    lines.push(
      `| ${name.padEnd(width)} | ${String(t.requests).padStart(8)} | ${String(t.ok).padStart(11)} | ${String(t.faulted).padStart(16)} | ${String(t.other).padStart(3)} | ${String(t.status500).padStart(3)} |`,
    );
  const samples = rows.flatMap(([name, t]) => t.samples.map((sample) => `  ${name}: ${sample}`));
  process.stdout.write(
    `\nRequests:\n${lines.join('\n')}\n${samples.length ? `\nFirst 4xx answers of each (refusals by design or by the faults):\n${samples.join('\n')}\n` : ''}`,
  );
}

/** --tamper: one violation of each kind planted in what was collected; every check must show its own. */
function tamperVerdict(snapshot: Snapshot, clean: CheckResult[]): number {
  const planted = checkAll(plantViolations(snapshot));
  const missed = planted.filter(
    (result, i) => result.violations.length <= clean[i].violations.length,
  );
  process.stdout.write(
    `\nWith one planted violation of each kind:\n${renderTable(planted, 2).text}\n`,
  );
  if (missed.length) {
    process.stdout.write(
      `tamper self-test FAILED: ${missed.map((m) => m.invariant).join('; ')} saw nothing\n`,
    );
    return 1;
  }
  process.stdout.write('tamper self-test: every check showed its planted violation\n');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
