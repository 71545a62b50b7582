// `npm run bench`: Portico's audited read side by side with a bare mTLS reverse proxy (nginx) in front of
// the same sandbox, under the same wrk load. Prints figures; asserts nothing.
//
//   npm run bench                  3 rounds of 20 s at 32 and at 4 connections
//   npm run bench -- --quick       1 round of 6 s (while developing)
//   npm run bench -- --json        the figures as JSON on stdout instead of the table
//   npm run bench -- --json=FILE   the table, and the figures as JSON in FILE
//   BENCH_PROFILE=DIR npm run bench   also writes a V8 CPU profile of each Portico process into DIR
//   BENCH_TARGETS=nginx,postgres npm run bench   only those targets (of nginx, postgres, embedded)
//   BENCH_SCENARIOS=attended npm run bench       only those scenarios (of attended, unattended, card)
//
// The sandbox runs in its own process (as the bank would); Portico runs on PostgreSQL (a database of its
// own, BENCH_DATABASE, created fresh) and on the embedded engine, each with GATEWAY_WORKERS=BENCH_WORKERS
// (default 1); nginx (when installed) runs as many workers, each with a keep-alive pool of TLS
// connections presenting the same client certificate. Each round drives every target in turn, twice for
// half the time each, in the order A B C C B A, so that the ratio Portico/nginx compares figures taken
// moments apart and a drift of the machine's speed during the round weighs on both.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { ensureDevCertificates } from '#src/sandbox/dev-certificates.js';
import { Agent, request } from 'undici';
import { completeSca } from '#src/sandbox/scripted-psu.js';
import { encodeForm } from '#src/upstreams/http/form-encoding.js';

const args = new Set(process.argv.slice(2));
const QUICK = args.has('--quick');
const JSON_OUT = args.has('--json');
const JSON_FILE = [...args].find((arg) => arg.startsWith('--json='))?.slice('--json='.length);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 6 : 20));
/** Each measurement is two runs of half the time (see the rounds in main). */
const HALF = Math.max(1, Math.round(SECONDS / 2));
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 10);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '32,4').split(',').map(Number);
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 18700);
const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = process.env.BENCH_DATABASE ?? 'portico_bench';
const NGINX = process.env.BENCH_NGINX ?? '/usr/sbin/nginx';
/** Where Portico's CPU profiles go (`--cpu-prof`; open them in Chrome DevTools), when set. */
const PROFILE_DIR = process.env.BENCH_PROFILE;
/** The gateway's V8 flags, as `npm start` (package.json) and docker-compose.yml give them. */
const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=64'];
/**
 * Gateway processes of each Portico (GATEWAY_WORKERS) and nginx worker processes: the same number for
 * both, 1 unless BENCH_WORKERS says otherwise. On a 2-core machine that also runs the sandbox, PostgreSQL
 * and wrk, a second worker of either only competes for the same cores (measured: Portico 2 workers 0.17–0.22
 * of nginx against 0.23–0.29 with one).
 */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
/** The idle upstream connections each nginx worker keeps: the highest concurrency of the load. */
const UPSTREAM_KEEPALIVE = Math.max(...CONNECTIONS);
/** wrk's threads (BENCH_WRK_THREADS): the load generator shares the machine's cores with what it measures. */
const WRK_THREADS = Number(process.env.BENCH_WRK_THREADS ?? 2);
const TARGETS = new Set((process.env.BENCH_TARGETS ?? 'nginx,postgres,embedded').split(','));
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'attended,unattended,card').split(','));
/** Whether a scenario ('attended balances read', …) is among BENCH_SCENARIOS (its first word). */
const wanted = (scenario: { name: string }) => SCENARIOS.has(scenario.name.split(' ')[0]);
const CERTS = resolve('certs/dev');
const CLK_TCK = 100;
const IBAN = 'HU75118000170000001234567817';

const CARD_PAYMENTS = QUICK ? 50 : 200;

const log = (line: string) => {
  if (!JSON_OUT) process.stdout.write(`${line}\n`);
  else process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------------------------------------- processes

function cpuTicks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((candidate) => {
      try {
        const stat = readFileSync(`/proc/${candidate}/stat`, 'utf8');
        return Number(stat.split(') ')[1].split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

interface Started {
  child: ChildProcess;
  output: () => string;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  stop: () => Promise<void>;
}

function start(command: string, argv: string[], env: Record<string, string>): Started {
  const child = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Keep only the start of the output (the banner); later lines are read and dropped.
  const keep = (chunk: Buffer) => {
    if (out.length < 200_000) out += chunk.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    child,
    output: () => out,
    waitFor: (pattern, timeoutMs = 120_000) =>
      new Promise((done, fail) => {
        const timer = setTimeout(
          () => fail(new Error(`timed out waiting for ${pattern}:\n${out}`)),
          timeoutMs,
        );
        const check = () => {
          const match = pattern.exec(out);
          if (match) {
            clearTimeout(timer);
            done(match);
          }
        };
        child.stdout?.on('data', check);
        child.stderr?.on('data', check);
        child.once('exit', (code) => {
          clearTimeout(timer);
          fail(new Error(`${command} exited with ${code}:\n${out}`));
        });
        check();
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

// ---------------------------------------------------------------------------------------------- targets

interface Scenario {
  name: string;
  url: string;
  headers: Record<string, string>;
}

interface Target {
  name: string;
  /** Processes whose CPU is charged to this target, by role. */
  pids: () => Promise<Record<string, number[]>>;
  scenarios: Scenario[];
  /** Database statements sent so far (Portico's counter), when known. */
  statements?: () => Promise<number>;
  startup?: { readyMs: number; rssMiB: Record<string, number> };
  stop: () => Promise<void>;
}

async function metricValue(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

interface PorticoOptions {
  name: string;
  env: Record<string, string>;
  port: number;
  metricsPort: number;
  sandbox: SandboxProcess;
  postgresPids?: () => Promise<number[]>;
}

/** Portico as `npm start` runs it (dist/main.js), in sandbox mode against the sandbox process. */
async function startPortico(options: PorticoOptions): Promise<
  Target & {
    consentIds: { attended: string; unattended: string };
  }
> {
  const started = performance.now();
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${resolve(PROFILE_DIR)}`] : [];
  const gateway = start(process.execPath, [...GATEWAY_NODE_FLAGS, ...profile, 'dist/main.js'], {
    ...options.env,
    PORT: String(options.port),
    METRICS_PORT: String(options.metricsPort),
    LOG_LEVEL: 'info',
    UPSTREAM_OB_BASE_URL: options.sandbox.openBankingUrl,
    SANDBOX_CERTS_DIR: CERTS,
    RATE_LIMIT_PER_MINUTE: '1000000',
    RECONCILE_ON_START: 'false',
    GATEWAY_WORKERS: String(WORKERS),
  });
  const [, key] = await gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/);
  const readyMs = performance.now() - started;
  const pid = gateway.child.pid as number;
  await new Promise((done) => setTimeout(done, 2000));
  // The primary's children: its gateway workers (running dist/main.js too) and the embedded engine.
  const processes = () => {
    const children = childPids(pid);
    const isWorker = (child: number) => commandLine(child).includes('dist/main.js');
    const engine = children.filter((child) => !isWorker(child));
    return {
      gateway: [pid, ...children.filter(isWorker)],
      ...(engine.length > 0 ? { engine } : {}),
    };
  };
  const rss: Record<string, number> = {};
  for (const [role, pids] of Object.entries(processes()))
    if (pids.length > 0) rss[role] = pids.reduce((sum, each) => sum + rssMiB(each), 0);

  const base = `http://127.0.0.1:${options.port}`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const consent = async (): Promise<{ consentId: string; accountId: string }> => {
    const created = (await (
      await fetch(`${base}/v1/consents`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          brandId: 'danube-bank',
          access: { accounts: [{ iban: IBAN }], balances: [{ iban: IBAN }] },
          recurringIndicator: true,
          validUntil: '2099-12-31',
          frequencyPerDay: 100,
          redirectUri: 'https://app.example/back',
        }),
      })
    ).json()) as { consentId: string; _links: { scaRedirect: string } };
    const callback = await completeSca(created._links.scaRedirect, {
      username: 'alice',
      password: 'alice-pass',
      decision: 'approve',
    });
    await fetch(callback, { redirect: 'manual' });
    const read = (await (
      await fetch(`${base}/v1/consents/${created.consentId}`, { headers })
    ).json()) as { accounts: { resourceId: string }[] };
    return { consentId: created.consentId, accountId: read.accounts[0].resourceId };
  };
  const attended = await consent();
  const unattended = await consent();
  const readUrl = (c: { accountId: string }) => `${base}/v1/accounts/${c.accountId}/balances`;
  const metricsUrl = `http://127.0.0.1:${options.metricsPort}/metrics`;
  return {
    name: options.name,
    startup: { readyMs, rssMiB: rss },
    consentIds: { attended: attended.consentId, unattended: unattended.consentId },
    scenarios: [
      {
        name: 'attended balances read',
        url: readUrl(attended),
        headers: {
          authorization: headers.authorization,
          'consent-id': attended.consentId,
          'psu-ip-address': '192.0.2.1',
        },
      },
      {
        name: 'unattended balances read',
        url: readUrl(unattended),
        headers: { authorization: headers.authorization, 'consent-id': unattended.consentId },
      },
    ],
    pids: async () => ({
      ...processes(),
      ...(options.postgresPids ? { postgres: await options.postgresPids() } : {}),
    }),
    statements: () => metricValue(metricsUrl, 'portico_db_statements_total'),
    stop: gateway.stop,
  };
}

interface SandboxProcess {
  openBankingUrl: string;
  scaUrl: string;
  pid: number;
  handshakes: () => Promise<number>;
  stop: () => Promise<void>;
}

async function startSandboxProcess(): Promise<SandboxProcess> {
  const sandbox = start(process.execPath, ['dist/sandbox/main.js'], {
    SANDBOX_CERTS_DIR: CERTS,
    SANDBOX_OB_PORT: String(PORT_BASE + 10),
    SANDBOX_SCA_PORT: String(PORT_BASE + 11),
    DATABASE_URL: '',
  });
  await sandbox.waitFor(/SCA pages and controls:\s+(\S+)/);
  const scaUrl = `http://localhost:${PORT_BASE + 11}`;
  return {
    openBankingUrl: `https://localhost:${PORT_BASE + 10}`,
    scaUrl,
    pid: sandbox.child.pid as number,
    handshakes: async () =>
      ((await (await fetch(`${scaUrl}/sandbox/tls-handshakes`)).json()) as { handshakes: number })
        .handshakes,
    stop: sandbox.stop,
  };
}

/** nginx (WORKERS workers) as a plain reverse proxy presenting the TPP certificate to the sandbox. */
async function startNginx(
  sandbox: SandboxProcess,
  upstreamConsents: { attended: string; unattended: string; accountId: string },
): Promise<Target | undefined> {
  if (!existsSync(NGINX)) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-nginx-'));
  const port = PORT_BASE + 20;
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes ${WORKERS};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream sandbox {
    server 127.0.0.1:${PORT_BASE + 10};
    # As many idle connections kept as the load has (fewer would close and open one per burst: a TLS
    # handshake at the sandbox each time), and kept for good, as Portico's pool keeps them (nginx's default
    # closes one after 1000 requests).
    keepalive ${UPSTREAM_KEEPALIVE};
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass https://sandbox;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host localhost:${PORT_BASE + 10};
      proxy_ssl_certificate ${CERTS}/tpp.pem;
      proxy_ssl_certificate_key ${CERTS}/tpp.key;
      proxy_ssl_trusted_certificate ${CERTS}/ca.pem;
      proxy_ssl_verify on;
      proxy_ssl_name localhost;
      proxy_ssl_server_name on;
      proxy_ssl_session_reuse on;
    }
  }
}
`,
  );
  const nginx = start(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {});
  const url = `http://127.0.0.1:${port}/danube-bank/bg/v1/accounts/${upstreamConsents.accountId}/balances`;
  for (let i = 0; i < 50; i++) {
    try {
      await fetch(url);
      break;
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  const bankHeaders = (consentId: string) => ({
    'consent-id': consentId,
    'x-request-id': '6e1f1c9a-3b8d-4f1e-9a47-2f5b1d0c8e11',
  });
  return {
    name: `nginx → sandbox (mTLS, ${WORKERS} worker${WORKERS > 1 ? 's' : ''}, keep-alive pool of ${UPSTREAM_KEEPALIVE})`,
    scenarios: [
      {
        name: 'attended balances read',
        url,
        headers: { ...bankHeaders(upstreamConsents.attended), 'psu-ip-address': '192.0.2.1' },
      },
      { name: 'unattended balances read', url, headers: bankHeaders(upstreamConsents.unattended) },
    ],
    pids: async () => ({ nginx: childPids(nginx.child.pid as number) }),
    stop: async () => {
      await nginx.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------- load

interface Load {
  requestsPerSecond: number;
  requests: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
}

function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!match) return NaN;
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(match[1]) * factor;
}

async function wrk(scenario: Scenario, connections: number, seconds: number): Promise<Load> {
  const argv = ['-t', String(Math.min(WRK_THREADS, connections)), '-c', String(connections)];
  argv.push('-d', `${seconds}s`, '--latency');
  for (const [name, value] of Object.entries(scenario.headers))
    argv.push('-H', `${name}: ${value}`);
  argv.push(scenario.url);
  const run = start('wrk', argv, {});
  await new Promise<void>((done) => run.child.once('exit', () => done()));
  const out = run.output();
  const percentile = (p: string) =>
    toMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1] ?? '');
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    requests,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    p50Ms: percentile('50'),
    p90Ms: percentile('90'),
    p99Ms: percentile('99'),
  };
}

interface Row extends Load {
  round: number;
  target: string;
  scenario: string;
  connections: number;
  loadAverage: string;
  /** CPU milliseconds per request, by process role. */
  cpuMsPerRequest: Record<string, number>;
  rssMiB: Record<string, number>;
  dbRoundTripsPerRequest?: number;
  upstreamHandshakes: number;
  ratioToNginx?: number;
}

async function measure(
  target: Target,
  scenario: Scenario,
  connections: number,
  round: number,
  sandbox: SandboxProcess,
  seconds: number,
): Promise<Row> {
  const pids = { ...(await target.pids()), sandbox: [sandbox.pid] };
  // Per process: a database backend that ends during the run (the pool closes idle ones) reads 0 after it,
  // so only processes alive at both ends are counted.
  const ticks = () =>
    new Map(
      Object.values(pids)
        .flat()
        .map((pid) => [pid, cpuTicks(pid)]),
    );
  const handshakesBefore = await sandbox.handshakes();
  const statementsBefore = target.statements ? await target.statements() : undefined;
  const before = ticks();
  const load = await wrk(scenario, connections, seconds);
  const after = ticks();
  const statementsAfter = target.statements ? await target.statements() : undefined;
  const handshakes = (await sandbox.handshakes()) - handshakesBefore;
  const cpu: Record<string, number> = {};
  for (const [role, list] of Object.entries(pids)) {
    const used = list.reduce((sum, pid) => {
      const [start, end] = [before.get(pid) ?? 0, after.get(pid) ?? 0];
      return start > 0 && end >= start ? sum + end - start : sum;
    }, 0);
    cpu[role] = (used * (1000 / CLK_TCK)) / Math.max(1, load.requests);
  }
  const rss: Record<string, number> = {};
  for (const [role, list] of Object.entries(pids))
    rss[role] = list.reduce((sum, pid) => sum + rssMiB(pid), 0);
  return {
    round,
    target: target.name,
    scenario: scenario.name,
    connections,
    loadAverage: loadAverage(),
    ...load,
    cpuMsPerRequest: cpu,
    rssMiB: rss,
    ...(statementsBefore !== undefined && statementsAfter !== undefined
      ? {
          dbRoundTripsPerRequest: (statementsAfter - statementsBefore) / Math.max(1, load.requests),
        }
      : {}),
    upstreamHandshakes: handshakes,
  };
}

/**
 * One row from a target's two half runs: requests, errors and handshakes added up, req/s their mean (the
 * halves last as long), CPU per request, statements per read and the percentiles weighted by requests
 * (a percentile of the whole is between its halves'; the weighted mean is close to it), RSS the last.
 */
function mergeHalves(halves: Row[]): Row {
  const [first, last] = [halves[0], halves[halves.length - 1]];
  const requests = halves.reduce((sum, half) => sum + half.requests, 0);
  const weighted = (value: (half: Row) => number | undefined) =>
    halves.reduce((sum, half) => sum + (value(half) ?? 0) * half.requests, 0) /
    Math.max(1, requests);
  const cpu: Record<string, number> = {};
  for (const role of Object.keys(first.cpuMsPerRequest))
    cpu[role] = weighted((half) => half.cpuMsPerRequest[role]);
  return {
    ...last,
    loadAverage: halves.map((half) => half.loadAverage).join(' / '),
    requests,
    requestsPerSecond:
      halves.reduce((sum, half) => sum + half.requestsPerSecond, 0) / halves.length,
    non2xx: halves.reduce((sum, half) => sum + half.non2xx, 0),
    errors: halves.reduce((sum, half) => sum + half.errors, 0),
    p50Ms: weighted((half) => half.p50Ms),
    p90Ms: weighted((half) => half.p90Ms),
    p99Ms: weighted((half) => half.p99Ms),
    cpuMsPerRequest: cpu,
    ...(first.dbRoundTripsPerRequest !== undefined
      ? { dbRoundTripsPerRequest: weighted((half) => half.dbRoundTripsPerRequest) }
      : {}),
    upstreamHandshakes: halves.reduce((sum, half) => sum + half.upstreamHandshakes, 0),
  };
}

// ---------------------------------------------------------------------------------------------- report

const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

function printTable(rows: Row[]): void {
  log(
    '\n| round | load avg | scenario | conns | target | req/s | p50 ms | p90 ms | p99 ms | non-2xx | ratio P/nginx | CPU ms/req | RSS MiB | DB trips/read | handshakes |',
  );
  log(
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const row of rows) {
    const cpu = Object.entries(row.cpuMsPerRequest)
      .map(([role, ms]) => `${role} ${ms.toFixed(2)}`)
      .join(', ');
    const rss = Object.entries(row.rssMiB)
      .filter(([role]) => role !== 'postgres')
      .map(([role, mib]) => `${role} ${mib.toFixed(0)}`)
      .join(', ');
    log(
      `| ${row.round} | ${row.loadAverage} | ${row.scenario} | ${row.connections} | ${row.target} | ${fixed(row.requestsPerSecond)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p90Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${row.non2xx + row.errors} | ${fixed(row.ratioToNginx, 2)} | ${cpu} | ${rss} | ${fixed(row.dbRoundTripsPerRequest, 2)} | ${row.upstreamHandshakes} |`,
    );
  }
}

function printSpread(rows: Row[]): void {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const key = `${row.scenario} | ${row.connections} | ${row.target}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  log('\n| scenario | conns | target | req/s min–max | ratio min–max | p50 ms min–max |');
  log('| --- | --- | --- | --- | --- | --- |');
  for (const [key, group] of groups) {
    const range = (values: (number | undefined)[], digits: number) => {
      const known = values.filter((v): v is number => v !== undefined && !Number.isNaN(v));
      return known.length
        ? `${Math.min(...known).toFixed(digits)}–${Math.max(...known).toFixed(digits)}`
        : '–';
    };
    log(
      `| ${key} | ${range(
        group.map((r) => r.requestsPerSecond),
        0,
      )} | ${range(
        group.map((r) => r.ratioToNginx),
        2,
      )} | ${range(
        group.map((r) => r.p50Ms),
        2,
      )} |`,
    );
  }
}

// ---------------------------------------------------------------------------------------------- main

async function freshDatabase(name = DATABASE): Promise<string | undefined> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
    // Only the bench's own database is ever dropped.
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    return url.toString();
  } catch {
    return undefined;
  } finally {
    await admin.end().catch(() => undefined);
  }
}

interface CardFigures {
  target: string;
  portico: { p50Ms: number; p99Ms: number };
  direct: { p50Ms: number; p99Ms: number };
  loadAverage: string;
}

/**
 * Card payments one after another through Portico (its own sandbox in process, as `npm start` runs it) with
 * the demo tenant's merchant, then as many straight to that sandbox's card API with a merchant of its own:
 * what Portico adds to a write (validation, mapping, row and history, write-ahead access log, key opening,
 * contract check).
 */
async function measureCardPayments(
  name: string,
  env: Record<string, string>,
): Promise<CardFigures> {
  const port = PORT_BASE + 50;
  const gateway = start(process.execPath, [...GATEWAY_NODE_FLAGS, 'dist/main.js'], {
    ...env,
    PORT: String(port),
    METRICS_PORT: String(PORT_BASE + 51),
    SANDBOX_OB_PORT: String(PORT_BASE + 52),
    SANDBOX_SCA_PORT: String(PORT_BASE + 53),
    SANDBOX_CARD_PORT: String(PORT_BASE + 54),
    SANDBOX_POS_PORT: String(PORT_BASE + 55),
    SANDBOX_CERTS_DIR: CERTS,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RECONCILE_ON_START: 'false',
  });
  try {
    const [, key] = await gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/);
    const banner = gateway.output();
    const cardUrl = /Sandbox card: (https:\/\/\S+)/.exec(banner)?.[1];
    const controlUrl = /test merchant: POST (http:\/\/\S+)\/sandbox\/card\/merchants/.exec(
      banner,
    )?.[1];
    if (!cardUrl || !controlUrl) throw new Error('the banner shows no sandbox card listener');
    const card = {
      cardNumber: '4111111111111111',
      expirationMonth: '12',
      expirationYear: '2030',
      holderName: 'Bench',
      cvv: '123',
    };
    const timed = async (send: () => Promise<number>) => {
      for (let i = 0; i < 20; i++) await send();
      const latencies: number[] = [];
      for (let i = 0; i < CARD_PAYMENTS; i++) {
        const t = performance.now();
        const status = await send();
        if (status !== 200 && status !== 201) throw new Error(`a card payment answered ${status}`);
        latencies.push(performance.now() - t);
      }
      latencies.sort((a, b) => a - b);
      return {
        p50Ms: latencies[Math.floor(CARD_PAYMENTS * 0.5)],
        p99Ms: latencies[Math.floor(CARD_PAYMENTS * 0.99)],
      };
    };
    const portico = await timed(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/v1/card/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 1099, ...card }),
      });
      await response.arrayBuffer();
      return response.status;
    });
    const merchant = (await (
      await fetch(`${controlUrl}/sandbox/card/merchants`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { secretKey: string };
    const agent = new Agent({ connect: { ca: readFileSync(join(CERTS, 'ca.pem')) } });
    const authorization = `Basic ${Buffer.from(`${merchant.secretKey}:`).toString('base64')}`;
    const direct = await timed(async () => {
      const response = await request(`${cardUrl}/payments`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: encodeForm({
          amount: 1099,
          card_number: card.cardNumber,
          expiration_month: card.expirationMonth,
          expiration_year: card.expirationYear,
          holder_name: card.holderName,
          cvv: card.cvv,
        }),
      });
      await response.body.arrayBuffer();
      return response.statusCode;
    });
    await agent.close();
    log(
      `card payments ${name}: Portico p50 ${portico.p50Ms.toFixed(1)} ms, sandbox p50 ${direct.p50Ms.toFixed(1)} ms`,
    );
    return { target: name, portico, direct, loadAverage: loadAverage() };
  } finally {
    await gateway.stop();
  }
}

async function main(): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(DATABASE))
    throw new Error('BENCH_DATABASE: a plain lower-case name');
  if (spawnSync('wrk', ['--version']).error)
    throw new Error('wrk is not installed (apt-get install wrk)');
  ensureDevCertificates(CERTS);
  const stops: (() => Promise<void>)[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
  const rows: Row[] = [];
  const startups: Record<string, unknown>[] = [];
  const cards: CardFigures[] = [];
  try {
    const sandbox = await startSandboxProcess();
    stops.push(sandbox.stop);
    const targets: Target[] = [];

    const databaseUrl = TARGETS.has('postgres') ? await freshDatabase() : undefined;
    let upstream: { attended: string; unattended: string; accountId: string } | undefined;
    if (databaseUrl) {
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      stops.push(() => db.end());
      const portico = await startPortico({
        name: 'Portico on PostgreSQL',
        env: { DATABASE_URL: databaseUrl },
        port: PORT_BASE + 30,
        metricsPort: PORT_BASE + 31,
        sandbox,
        postgresPids: async () =>
          (
            await db.query<{ pid: number }>(
              'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
              [DATABASE],
            )
          ).rows.map((row) => row.pid),
      });
      stops.push(portico.stop);
      targets.push(portico);
      const upstreamOf = async (consentId: string) =>
        (
          await db.query<{ upstream_consent_id: string; accounts: { resourceId: string }[] }>(
            'SELECT upstream_consent_id, accounts FROM consents WHERE id = $1',
            [consentId],
          )
        ).rows[0];
      const attended = await upstreamOf(portico.consentIds.attended);
      const unattended = await upstreamOf(portico.consentIds.unattended);
      upstream = {
        attended: attended.upstream_consent_id,
        unattended: unattended.upstream_consent_id,
        accountId: attended.accounts[0].resourceId,
      };
    } else if (TARGETS.has('postgres')) {
      log(`PostgreSQL at ${POSTGRES_URL} not reachable: Portico on PostgreSQL and nginx skipped`);
    }

    const embedded = TARGETS.has('embedded')
      ? await startPortico({
          name: 'Portico on the embedded engine',
          env: { DATABASE_URL: '', EMBEDDED_DB_DIR: join(dataDir, 'pglite') },
          port: PORT_BASE + 40,
          metricsPort: PORT_BASE + 41,
          sandbox,
        })
      : undefined;
    if (embedded) {
      stops.push(embedded.stop);
      targets.push(embedded);
    }

    const nginx =
      upstream && TARGETS.has('nginx') ? await startNginx(sandbox, upstream) : undefined;
    if (nginx) {
      stops.push(nginx.stop);
      targets.unshift(nginx);
    } else if (upstream) log(`nginx not found at ${NGINX} (apt-get install nginx-light): skipped`);

    for (const target of targets)
      if (target.startup) startups.push({ target: target.name, fresh: true, ...target.startup });

    // Warm-up: JIT (V8 takes tens of seconds of load to optimise the gateway's hot path on a slow
    // machine), heap sizing, pools and connections, before any figure is taken.
    for (const target of targets) target.scenarios = target.scenarios.filter(wanted);
    for (const target of targets)
      for (const scenario of target.scenarios)
        await wrk(scenario, Math.max(...CONNECTIONS), QUICK ? 2 : WARM_UP_SECONDS);

    const scenarioNames = [...new Set(targets.flatMap((t) => t.scenarios.map((s) => s.name)))];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenarioName of scenarioNames)
        for (const connections of CONNECTIONS) {
          // Each target runs twice for half the time, in the order A B C then C B A, so that the machine
          // slowing down or speeding up during the round weighs on every target alike (counterbalanced).
          const halves = new Map<Target, Row[]>();
          for (const order of [targets, [...targets].reverse()])
            for (const target of order) {
              const scenario = target.scenarios.find((s) => s.name === scenarioName);
              if (!scenario) continue;
              const half = await measure(target, scenario, connections, round, sandbox, HALF);
              halves.set(target, [...(halves.get(target) ?? []), half]);
            }
          const same = [...halves.values()].map(mergeHalves);
          for (const row of same)
            log(
              `round ${round} ${scenarioName} c=${connections} ${row.target}: ${row.requestsPerSecond.toFixed(0)} req/s, p50 ${row.p50Ms.toFixed(2)} ms (load ${row.loadAverage})`,
            );
          const reference = same.find((row) => row.target.startsWith('nginx'));
          for (const row of same)
            if (reference && row !== reference)
              row.ratioToNginx = row.requestsPerSecond / reference.requestsPerSecond;
          rows.push(...same);
        }
    }

    // Start-up on an existing embedded data directory (the second start of `npm start`).
    if (embedded) {
      await embedded.stop();
      stops.splice(stops.indexOf(embedded.stop), 1);
      const again = await startPortico({
        name: 'Portico on the embedded engine',
        env: { DATABASE_URL: '', EMBEDDED_DB_DIR: join(dataDir, 'pglite') },
        port: PORT_BASE + 40,
        metricsPort: PORT_BASE + 41,
        sandbox,
      });
      startups.push({ target: again.name, fresh: false, ...again.startup });
      await again.stop();
    }

    // Card payments: a write each (row, history, write-ahead access log, form mapping, contract check).
    const cardDatabase =
      TARGETS.has('postgres') && SCENARIOS.has('card')
        ? await freshDatabase(`${DATABASE}_card`)
        : undefined;
    if (cardDatabase)
      cards.push(
        await measureCardPayments('Portico on PostgreSQL', { DATABASE_URL: cardDatabase }),
      );
    if (TARGETS.has('embedded') && SCENARIOS.has('card'))
      cards.push(
        await measureCardPayments('Portico on the embedded engine', {
          DATABASE_URL: '',
          EMBEDDED_DB_DIR: join(dataDir, 'pglite-card'),
        }),
      );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }

  const figures = `${JSON.stringify({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, startups, rows, cards }, null, 2)}\n`;
  if (JSON_OUT) {
    process.stdout.write(figures);
    return;
  }
  if (JSON_FILE) writeFileSync(JSON_FILE, figures);
  printTable(rows);
  if (ROUNDS > 1) printSpread(rows);
  log('\nStart-up (spawn to the ready banner, migrations included) and memory 2 s after it:');
  for (const startup of startups) {
    const s = startup as {
      target: string;
      fresh: boolean;
      readyMs: number;
      rssMiB: Record<string, number>;
    };
    log(
      `  ${s.target} (${s.fresh ? 'fresh database' : 'existing data directory'}): ${s.readyMs.toFixed(0)} ms; RSS ${Object.entries(
        s.rssMiB,
      )
        .map(([role, mib]) => `${role} ${mib.toFixed(0)} MiB`)
        .join(', ')}`,
    );
  }
  log(`\nCard payments, ${CARD_PAYMENTS} sequential (p50 / p99):`);
  for (const card of cards)
    log(
      `  ${card.target}: through Portico ${card.portico.p50Ms.toFixed(1)} / ${card.portico.p99Ms.toFixed(1)} ms; straight to the sandbox ${card.direct.p50Ms.toFixed(1)} / ${card.direct.p99Ms.toFixed(1)} ms (load ${card.loadAverage})`,
    );
  log(
    `\nPortico: GATEWAY_WORKERS=${WORKERS}; nginx: worker_processes ${WORKERS}. CPU ms/req: CPU time of each process over the run divided by requests ("gateway": the primary and its workers together); "postgres" is this database's backends. DB trips/read: statements Portico sent per request (portico_db_statements_total). handshakes: TLS handshakes the sandbox completed during the run.`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
