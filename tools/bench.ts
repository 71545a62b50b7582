// `npm run bench`: Portico's audited read side by side with a bare mTLS reverse proxy (nginx) in front of
// the same sandbox, under the same wrk load. Prints figures; asserts nothing.
//
//   npm run bench                  3 rounds of 20 s at 32 and at 4 connections
//   npm run bench -- --quick       1 round of 6 s (while developing)
//   npm run bench -- --json        the figures as JSON on stdout instead of the table
//   npm run bench -- --json=FILE   the table, and the figures as JSON in FILE
//   BENCH_PROFILE=DIR npm run bench   also writes a V8 CPU profile of each Portico process into DIR
//   BENCH_TARGETS=nginx,postgres npm run bench   only those targets (of nginx, postgres, embedded)
//   BENCH_SCENARIOS=attended npm run bench       only those scenarios (of attended, unattended, card: the writes, tracing)
//   BENCH_WRITES=800 npm run bench               writes made one after another per row (default 200; twice as many concurrent)
//
// The sandbox runs in its own process (as the bank would); Portico runs on PostgreSQL (a database of its
// own, BENCH_DATABASE, created fresh) and on the embedded engine, each with GATEWAY_WORKERS=BENCH_WORKERS
// (default 1); nginx (when installed) runs as many workers, each with a keep-alive pool of TLS
// connections presenting the same client certificate. Each round drives every target in turn, twice for
// half the time each, in the order A B C C B A, so that the ratio Portico/nginx compares figures taken
// moments apart and a drift of the machine's speed during the round weighs on both.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { ensureDevCertificates } from '#src/sandbox/dev-certificates.js';
import { Agent, request } from 'undici';
import { randomUUID } from 'node:crypto';
import { completeSca } from '#src/sandbox/scripted-psu.js';
import { encodeForm } from '#src/upstreams/http/form-encoding.js';
import { traceHeaders } from '#src/upstreams/http/call-trace.js';
import { parseTraceparent } from '#src/platform/tracing/trace-context.js';
import { ID_ONLY_TRACER } from '#src/platform/tracing/tracer.js';
import type { TimelineSummary } from './write-timeline.js';

const args = new Set(process.argv.slice(2));
const QUICK = args.has('--quick');
const JSON_OUT = args.has('--json');
const JSON_FILE = [...args].find((arg) => arg.startsWith('--json='))?.slice('--json='.length);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 6 : 20));
/** Each measurement is two runs of half the time (see the rounds in main). */
const HALF = Math.max(1, Math.round(SECONDS / 2));
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? (QUICK ? 2 : 10));
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '32,4').split(',').map(Number);
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 18700);
const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = process.env.BENCH_DATABASE ?? 'portico_bench';
const NGINX = process.env.BENCH_NGINX ?? '/usr/sbin/nginx';
/** Where Portico's CPU profiles go (`--cpu-prof`; open them in Chrome DevTools), when set. */
const PROFILE_DIR = process.env.BENCH_PROFILE;
/** The gateway's V8 flags, as `npm start` (package.json) and docker-compose.yml give them. */
const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=30'];
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
const TARGETS = new Set((process.env.BENCH_TARGETS ?? 'nginx,node,postgres,embedded').split(','));
const SCENARIOS = new Set(
  (process.env.BENCH_SCENARIOS ?? 'attended,unattended,card,tracing').split(','),
);
/** Whether a scenario ('attended balances read', …) is among BENCH_SCENARIOS (its first word). */
const wanted = (scenario: { name: string }) => SCENARIOS.has(scenario.name.split(' ')[0]);
const CERTS = resolve('certs/dev');
const CLK_TCK = 100;
const IBAN = 'HU75118000170000001234567817';

/** Writes of each kind measured one after another (twice as many under concurrency). */
const WRITES = Number(process.env.BENCH_WRITES ?? (QUICK ? 50 : 200));
/** Connections of the concurrent card payments. */
const WRITE_CONNECTIONS = 16;

const log = (line: string) => {
  if (!JSON_OUT) process.stdout.write(`${line}\n`);
  else process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------------------------------------- processes

/** CPU ticks (user and system) of a process, or of one of its threads (`PID/task/TID`). */
function cpuTicks(pid: number | string): number {
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

/** A V8 CPU profile of a Portico process into BENCH_PROFILE, when it is set. */
const profileFlags = (): string[] =>
  PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${resolve(PROFILE_DIR)}`] : [];

/** Portico as `npm start` runs it (dist/main.js), in sandbox mode against the sandbox process. */
async function startPortico(options: PorticoOptions): Promise<
  Target & {
    consentIds: { attended: string; unattended: string };
  }
> {
  const started = performance.now();
  const gateway = start(
    process.execPath,
    [...GATEWAY_NODE_FLAGS, ...profileFlags(), 'dist/main.js'],
    {
      ...options.env,
      PORT: String(options.port),
      METRICS_PORT: String(options.metricsPort),
      LOG_LEVEL: 'info',
      UPSTREAM_OB_BASE_URL: options.sandbox.openBankingUrl,
      SANDBOX_CERTS_DIR: CERTS,
      RATE_LIMIT_PER_MINUTE: '1000000',
      RECONCILE_ON_START: 'false',
      GATEWAY_WORKERS: String(WORKERS),
    },
  );
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
    // The reads use open banking only: the card and POS listeners take any free port.
    SANDBOX_CARD_PORT: '0',
    SANDBOX_POS_PORT: '0',
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

/** The two reads of the sandbox's own API through a proxy (nginx, the bare Node proxy) under these consents. */
function bankReads(
  url: string,
  upstreamConsents: { attended: string; unattended: string },
): Scenario[] {
  const bankHeaders = (consentId: string) => ({
    'consent-id': consentId,
    'x-request-id': '6e1f1c9a-3b8d-4f1e-9a47-2f5b1d0c8e11',
  });
  return [
    {
      name: 'attended balances read',
      url,
      headers: { ...bankHeaders(upstreamConsents.attended), 'psu-ip-address': '192.0.2.1' },
    },
    { name: 'unattended balances read', url, headers: bankHeaders(upstreamConsents.unattended) },
  ];
}

/**
 * The bare Node proxy (tools/bench-node-proxy.ts): node:http and undici's mTLS pool, the answer's JSON
 * parsed and written again, nothing of Portico's own. One process, as Portico and nginx have one.
 */
async function startNodeProxy(
  sandbox: SandboxProcess,
  upstreamConsents: { attended: string; unattended: string; accountId: string },
): Promise<Target> {
  const port = PORT_BASE + 21;
  const proxy = start(
    process.execPath,
    [
      ...GATEWAY_NODE_FLAGS,
      'dist-tools/bench-node-proxy.js',
      String(port),
      sandbox.openBankingUrl,
      CERTS,
    ],
    {},
  );
  await proxy.waitFor(/node proxy listening/);
  const url = `http://127.0.0.1:${port}/danube-bank/bg/v1/accounts/${upstreamConsents.accountId}/balances`;
  return {
    name: 'Node proxy → sandbox (node:http + undici mTLS pool, JSON parsed and written again)',
    scenarios: bankReads(url, upstreamConsents),
    pids: async () => ({ node: [proxy.child.pid as number] }),
    stop: proxy.stop,
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
  return {
    name: `nginx → sandbox (mTLS, ${WORKERS} worker${WORKERS > 1 ? 's' : ''}, keep-alive pool of ${UPSTREAM_KEEPALIVE})`,
    scenarios: bankReads(url, upstreamConsents),
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
  const pids: Record<string, number[]> = { ...(await target.pids()), sandbox: [sandbox.pid] };
  // What CPU is counted for, by role; the gateway's main threads apart too (a main thread's id is its
  // process's): JavaScript's own thread, against V8's helper threads (concurrent marking, scavenges).
  const roles: Record<string, (number | string)[]> = {};
  for (const [role, list] of Object.entries(pids)) {
    roles[role] = list;
    if (role === 'gateway') roles['gateway main thread'] = list.map((pid) => `${pid}/task/${pid}`);
  }
  // Per process: a database backend that ends during the run (the pool closes idle ones) reads 0 after it,
  // so only processes alive at both ends are counted.
  const ticks = () =>
    new Map(
      Object.values(roles)
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
  for (const [role, list] of Object.entries(roles)) {
    const used = list.reduce<number>((sum, pid) => {
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

// ---------------------------------------------------------------------------------------------- tracing

/** An OTLP/HTTP endpoint that takes every export at once and counts its spans (a collector that keeps up). */
async function startSpanSink(
  port: number,
): Promise<{ url: string; spans: () => number; stop: () => Promise<void> }> {
  let spans = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      spans += body.split('"spanId":').length - 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((listening) => server.listen(port, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    stop: () => new Promise((closed) => server.close(() => closed())),
  };
}

/**
 * What export off leaves on a read, timed alone in this process: the caller's traceparent read, the
 * request's ids, the provider call's ids and its traceparent header, in microseconds per request.
 */
async function idsOnlyMicroseconds(): Promise<number> {
  const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const once = () => {
    const request = ID_ONLY_TRACER.startSpan(
      'GET /v1/accounts/:accountId/balances',
      'server',
      parseTraceparent(header),
    );
    const call = request.child('open-banking getBalances', 'client');
    return Promise.resolve(traceHeaders(call));
  };
  for (let i = 0; i < 50_000; i++) await once();
  const times = 200_000;
  const started = process.cpuUsage();
  for (let i = 0; i < times; i++) await once();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / times;
}

interface TracingFigures {
  round: number;
  connections: number;
  off: Row;
  exported: Row;
  /** Spans the sink received per request of the exported run. */
  spansPerRequest: number;
}

/**
 * The attended read with spans exported (OTEL_EXPORTER_OTLP_ENDPOINT at a local sink, every request
 * sampled) beside the same read with export off (the Portico on PostgreSQL measured above), each round in
 * the order off, exported, exported, off: what tracing costs when it is on, and that off costs nothing
 * beyond the ids every request gets.
 */
async function measureTracing(
  off: Target,
  sandbox: SandboxProcess,
  db: pg.Client,
): Promise<TracingFigures[]> {
  const scenarioName = 'attended balances read';
  const offScenario = off.scenarios.find((scenario) => scenario.name === scenarioName);
  const database = await freshDatabase(`${DATABASE}_tracing`);
  if (!offScenario || !database) {
    log(
      'tracing: needs the attended read on PostgreSQL (BENCH_SCENARIOS attended, BENCH_TARGETS postgres)',
    );
    return [];
  }
  const sink = await startSpanSink(PORT_BASE + 62);
  const exported = await startPortico({
    name: 'Portico on PostgreSQL, spans exported',
    env: { DATABASE_URL: database, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
    port: PORT_BASE + 60,
    metricsPort: PORT_BASE + 61,
    sandbox,
    postgresPids: async () =>
      (
        await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
          `${DATABASE}_tracing`,
        ])
      ).rows.map((row) => row.pid),
  });
  try {
    const exportedScenario = exported.scenarios.find((scenario) => scenario.name === scenarioName)!;
    const connections = Math.max(...CONNECTIONS);
    await wrk(exportedScenario, connections, WARM_UP_SECONDS);
    const figures: TracingFigures[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const halves = new Map<Target, Row[]>();
      let spans = 0;
      for (const [target, scenario] of [
        [off, offScenario],
        [exported, exportedScenario],
        [exported, exportedScenario],
        [off, offScenario],
      ] as const) {
        const before = sink.spans();
        const half = await measure(target, scenario, connections, round, sandbox, HALF);
        if (target === exported) spans += sink.spans() - before;
        halves.set(target, [...(halves.get(target) ?? []), half]);
      }
      const [offRow, exportedRow] = [
        mergeHalves(halves.get(off)!),
        mergeHalves(halves.get(exported)!),
      ];
      const spansPerRequest = spans / Math.max(1, exportedRow.requests);
      figures.push({ round, connections, off: offRow, exported: exportedRow, spansPerRequest });
      log(
        `round ${round} tracing c=${connections}: off ${offRow.requestsPerSecond.toFixed(0)} req/s, exported ${exportedRow.requestsPerSecond.toFixed(0)} req/s (${spansPerRequest.toFixed(1)} spans/request)`,
      );
    }
    return figures;
  } finally {
    await exported.stop();
    await sink.stop();
  }
}

function printTracing(figures: TracingFigures[], idsOnlyUs: number | undefined): void {
  if (idsOnlyUs !== undefined)
    log(
      `\nTracing with export off: the ids of a read (the caller's traceparent read, the request's and the provider call's span ids, the traceparent sent) take ${idsOnlyUs.toFixed(2)} µs of CPU per request, timed alone.`,
    );
  if (figures.length === 0) return;
  log(
    `\nTracing, ${scenarioLabel(figures[0])}: export off (no OTEL_EXPORTER_OTLP_ENDPOINT) against spans exported by OTLP/HTTP`,
  );
  log(
    '| round | export | req/s | p50 ms | p99 ms | gateway CPU ms/req | spans/req | req/s exported/off |',
  );
  log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { round, off, exported, spansPerRequest } of figures)
    for (const [label, row] of [
      ['off', off],
      ['exported', exported],
    ] as const)
      log(
        `| ${round} | ${label} | ${fixed(row.requestsPerSecond)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${fixed(row.cpuMsPerRequest.gateway, 3)} | ${label === 'off' ? '0' : spansPerRequest.toFixed(1)} | ${label === 'off' ? '' : fixed(exported.requestsPerSecond / off.requestsPerSecond, 2)} |`,
      );
}

const scenarioLabel = (figures: TracingFigures) =>
  `${figures.off.scenario} at ${figures.connections} connections`;

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

/** Latencies of one kind of write and, under concurrency, how many completed a second. */
interface WriteLoad {
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
}

interface WriteRow {
  write: string;
  connections: number;
  portico: WriteLoad;
  direct: WriteLoad;
}

interface WriteFigures {
  target: string;
  loadAverage: string;
  rows: WriteRow[];
  /** Where the time of a card payment through Portico goes, one at a time (write-timeline.ts). */
  timeline?: TimelineSummary;
}

/**
 * `count` writes from `connections` loops sending one after another (after a warm-up of a few each);
 * the percentiles are of every write, the rate is writes over the wall time of the whole.
 */
async function timedWrites(
  send: () => Promise<number>,
  count: number,
  connections: number,
): Promise<WriteLoad> {
  const ok = async () => {
    const status = await send();
    if (status !== 200 && status !== 201) throw new Error(`a write answered ${status}`);
  };
  const loops = (each: number, latencies?: number[]) =>
    Promise.all(
      Array.from({ length: connections }, async () => {
        for (let i = 0; i < each; i++) {
          const t = performance.now();
          await ok();
          latencies?.push(performance.now() - t);
        }
      }),
    );
  await loops(connections > 1 ? 4 : 20);
  const latencies: number[] = [];
  const started = performance.now();
  await loops(Math.ceil(count / connections), latencies);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    p50Ms: latencies[Math.floor(latencies.length * 0.5)],
    p99Ms: latencies[Math.floor(latencies.length * 0.99)],
    perSecond: latencies.length / seconds,
  };
}

/** A JSON POST through Portico; its status. */
async function postJson(
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * Writes through Portico (its own sandbox in process, as `npm start` runs it) with the demo tenant's
 * merchant, then the same writes straight to that sandbox with a merchant of its own: what Portico adds
 * to a write (validation, mapping, row and history, write-ahead access log, key opening, contract
 * check). Card payments one after another, from WRITE_CONNECTIONS at once, and one after another with
 * an Idempotency-Key; a POS payment on a terminal that approves at once and a marketplace seller, one
 * after another.
 */
async function measureWrites(name: string, env: Record<string, string>): Promise<WriteFigures> {
  const port = PORT_BASE + 50;
  const timelineFile = join(tmpdir(), `portico-bench-timeline-${process.pid}.json`);
  const gateway = start(
    process.execPath,
    [
      ...GATEWAY_NODE_FLAGS,
      ...profileFlags(),
      '--import',
      './dist-tools/write-timeline.js',
      'dist/main.js',
    ],
    {
      ...env,
      WRITE_TIMELINE_FILE: timelineFile,
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
    },
  );
  const agent = new Agent({
    connect: { ca: readFileSync(join(CERTS, 'ca.pem')) },
    connections: WRITE_CONNECTIONS,
  });
  try {
    const [, key] = await gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/);
    const banner = gateway.output();
    const operatorKey = /Operator key \(tenant "operations", role operator\): (ptk_\S+)/.exec(
      banner,
    )?.[1];
    const cardUrl = /Sandbox card: (https:\/\/\S+)/.exec(banner)?.[1];
    const posUrl = /Sandbox POS: {2}(https:\/\/\S+)\/pos\/v1/.exec(banner)?.[1];
    const controlUrl = /test merchant: POST (http:\/\/\S+)\/sandbox\/card\/merchants/.exec(
      banner,
    )?.[1];
    if (!cardUrl || !posUrl || !controlUrl || !operatorKey)
      throw new Error('the banner shows no sandbox card and POS listeners');
    const base = `http://127.0.0.1:${port}`;
    const control = async <T>(path: string, body: unknown): Promise<T> =>
      (await (
        await fetch(`${controlUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as T;
    const asOperator = async <T>(path: string): Promise<T> =>
      (await (
        await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${operatorKey}` } })
      ).json()) as T;
    const direct = async (
      url: string,
      authorization: string,
      contentType: string,
      body: string,
    ): Promise<number> => {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization, 'content-type': contentType },
        body,
      });
      await response.body.arrayBuffer();
      return response.statusCode;
    };
    const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString('base64')}`;

    // The demo tenant's merchant (Portico's side) and a merchant of the bench's own (straight).
    const { tenants } = await asOperator<{ tenants: { id: string; slug: string }[] }>(
      '/v1/tenants',
    );
    const demo = tenants.find((tenant) => tenant.slug === 'demo');
    const { merchantId: demoMerchant } = await asOperator<{ merchantId: string }>(
      `/v1/tenants/${demo?.id}/card-credentials`,
    );
    const own = await control<{ merchantId: string; secretKey: string }>(
      '/sandbox/card/merchants',
      { name: 'bench' },
    );
    const { posKey } = await control<{ posKey: string }>('/sandbox/pos/merchants', {
      merchantId: own.merchantId,
    });
    await control('/sandbox/pos/merchants', { merchantId: demoMerchant });
    const terminalOf = async (merchantId: string) =>
      (
        await control<{ terminals: { token: string }[] }>(
          `/sandbox/pos/merchants/${merchantId}/terminals`,
          {},
        )
      ).terminals[0].token;
    const [demoTerminal, ownTerminal] = [
      await terminalOf(demoMerchant),
      await terminalOf(own.merchantId),
    ];

    const card = {
      cardNumber: '4111111111111111',
      expirationMonth: '12',
      expirationYear: '2030',
      holderName: 'Bench',
      cvv: '123',
    };
    const cardThroughPortico = () =>
      postJson(`${base}/v1/card/payments`, key, { amount: 1099, ...card });
    // As an app makes a payment it may have to retry: with an Idempotency-Key (claimed, bound, answer stored).
    const cardWithKeyThroughPortico = () =>
      postJson(
        `${base}/v1/card/payments`,
        key,
        { amount: 1099, ...card },
        { 'idempotency-key': randomUUID() },
      );
    const cardStraight = () =>
      direct(
        `${cardUrl}/payments`,
        basic(own.secretKey),
        'application/x-www-form-urlencoded',
        encodeForm({
          amount: 1099,
          card_number: card.cardNumber,
          expiration_month: card.expirationMonth,
          expiration_year: card.expirationYear,
          holder_name: card.holderName,
          cvv: card.cvv,
        }),
      );
    const posPayment = { amount: 1240, currency: 'EUR', type: 'payment' };
    const posThroughPortico = () =>
      postJson(`${base}/v1/pos/transactions`, key, {
        ...posPayment,
        transactionId: randomUUID(),
        terminal: demoTerminal,
      });
    const posStraight = () =>
      direct(
        `${posUrl}/pos/v1/transactions`,
        basic(posKey),
        'application/json',
        JSON.stringify({ ...posPayment, transaction_id: randomUUID(), terminal: ownTerminal }),
      );
    let sellers = 0;
    const seller = () => {
      sellers++;
      return {
        email: `seller${sellers}@shop.example`,
        contactPhone: '+306900000000',
        description: `Seller ${sellers}`,
        businessName: `Business ${sellers}`,
        businessTitle: `Business ${sellers} S.A.`,
        businessTaxNumber: `EL${100000000 + sellers}`,
        businessAddress: 'Ermou 12, Athens',
        bankAccountIban: 'GR1601101250000000012300695',
        bankAccountBeneficiary: `Business ${sellers}`,
      };
    };
    const snake = (fields: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(fields).map(([name, value]) => [
          name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
          value,
        ]),
      );
    const sellerThroughPortico = () => postJson(`${base}/v1/marketplace/sellers`, key, seller());
    const sellerStraight = () =>
      direct(
        `${cardUrl}/sellers`,
        basic(own.secretKey),
        'application/x-www-form-urlencoded',
        encodeForm(snake(seller())),
      );

    const rows: WriteRow[] = [];
    const measured = async (
      write: string,
      connections: number,
      through: () => Promise<number>,
      straight: () => Promise<number>,
    ) => {
      const count = connections > 1 ? WRITES * 2 : WRITES;
      const row = {
        write,
        connections,
        portico: await timedWrites(through, count, connections),
        direct: await timedWrites(straight, count, connections),
      };
      log(
        `${write} ${name}, ${connections} at once: Portico p50 ${row.portico.p50Ms.toFixed(1)} ms, sandbox p50 ${row.direct.p50Ms.toFixed(1)} ms`,
      );
      rows.push(row);
    };
    // The timeline of the card payments one at a time: what came before is left out.
    await timelineOf(gateway.child.pid as number, timelineFile);
    await measured('card payment', 1, cardThroughPortico, cardStraight);
    const timeline = await timelineOf(gateway.child.pid as number, timelineFile);
    await measured('card payment', WRITE_CONNECTIONS, cardThroughPortico, cardStraight);
    await measured('card payment, Idempotency-Key', 1, cardWithKeyThroughPortico, cardStraight);
    await measured('POS payment', 1, posThroughPortico, posStraight);
    await measured('marketplace seller', 1, sellerThroughPortico, sellerStraight);
    return { target: name, loadAverage: loadAverage(), rows, timeline };
  } finally {
    rmSync(timelineFile, { force: true });
    await agent.close();
    await gateway.stop();
  }
}

/** The timelines the gateway's write-timeline preload gathered since the last call (it starts again). */
async function timelineOf(pid: number, file: string): Promise<TimelineSummary> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 5000; waited += 20) {
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as TimelineSummary;
      } catch {
        // Still being written.
      }
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error('the gateway wrote no write timeline');
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
  const writes: WriteFigures[] = [];
  let tracing: TracingFigures[] = [];
  let idsOnlyUs: number | undefined;
  try {
    const sandbox = await startSandboxProcess();
    stops.push(sandbox.stop);
    const targets: Target[] = [];

    const databaseUrl = TARGETS.has('postgres') ? await freshDatabase() : undefined;
    let postgres: { target: Target; db: pg.Client } | undefined;
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
      postgres = { target: portico, db };
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
    } else if (upstream && TARGETS.has('nginx'))
      log(`nginx not found at ${NGINX} (apt-get install nginx-light): skipped`);
    if (upstream && TARGETS.has('node')) {
      const node = await startNodeProxy(sandbox, upstream);
      stops.push(node.stop);
      targets.splice(nginx ? 1 : 0, 0, node);
    }

    for (const target of targets)
      if (target.startup) startups.push({ target: target.name, fresh: true, ...target.startup });

    // Warm-up: JIT (V8 takes tens of seconds of load to optimise the gateway's hot path on a slow
    // machine), heap sizing, pools and connections, before any figure is taken.
    for (const target of targets) target.scenarios = target.scenarios.filter(wanted);
    for (const target of targets)
      for (const scenario of target.scenarios)
        await wrk(scenario, Math.max(...CONNECTIONS), WARM_UP_SECONDS);

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

    // Tracing (docs/tracing.md): the same read with spans exported, beside export off.
    if (SCENARIOS.has('tracing')) idsOnlyUs = await idsOnlyMicroseconds();
    if (postgres && SCENARIOS.has('tracing'))
      tracing = await measureTracing(postgres.target, sandbox, postgres.db);

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

    // Writes: card payments (alone, concurrent, with a key), a POS payment, a marketplace seller.
    const cardDatabase =
      TARGETS.has('postgres') && SCENARIOS.has('card')
        ? await freshDatabase(`${DATABASE}_card`)
        : undefined;
    if (cardDatabase)
      writes.push(await measureWrites('Portico on PostgreSQL', { DATABASE_URL: cardDatabase }));
    if (TARGETS.has('embedded') && SCENARIOS.has('card'))
      writes.push(
        await measureWrites('Portico on the embedded engine', {
          DATABASE_URL: '',
          EMBEDDED_DB_DIR: join(dataDir, 'pglite-card'),
        }),
      );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }

  const figures = `${JSON.stringify({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, startups, rows, writes, tracing, idsOnlyUs }, null, 2)}\n`;
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
  printTracing(tracing, idsOnlyUs);
  log(
    `\nWrites (${WRITES} one after another, ${WRITES * 2} from ${WRITE_CONNECTIONS} connections): p50 / p99 ms, and writes a second`,
  );
  log('| target | write | conns | through Portico | straight to the sandbox | added p50 ms |');
  log('| --- | --- | --- | --- | --- | --- |');
  const shown = (load: WriteLoad) =>
    `${load.p50Ms.toFixed(1)} / ${load.p99Ms.toFixed(1)} ms, ${load.perSecond.toFixed(0)}/s`;
  for (const figures of writes)
    for (const row of figures.rows)
      log(
        `| ${figures.target} | ${row.write} | ${row.connections} | ${shown(row.portico)} | ${shown(row.direct)} | ${(row.portico.p50Ms - row.direct.p50Ms).toFixed(1)} |`,
      );
  for (const figures of writes) {
    if (!figures.timeline?.steps.length) continue;
    const { requests, seen, steps } = figures.timeline;
    log(
      `\nWhere a card payment's time goes, ${figures.target}, one at a time (median of each step over the ${requests} of ${seen} payments with the most common sequence; "provider": the sandbox in the gateway's process):`,
    );
    log('| step | p50 ms |');
    log('| --- | --- |');
    for (const step of steps) log(`| ${step.step} | ${step.p50Ms.toFixed(2)} |`);
    log(`| sum of the steps | ${steps.reduce((sum, step) => sum + step.p50Ms, 0).toFixed(2)} |`);
  }
  log(
    `\nPortico: GATEWAY_WORKERS=${WORKERS}; nginx: worker_processes ${WORKERS}. CPU ms/req: CPU time of each process over the run divided by requests ("gateway": the primary and its workers together, "gateway main thread" their JavaScript threads alone); "postgres" is this database's backends. DB trips/read: statements Portico sent per request (portico_db_statements_total). handshakes: TLS handshakes the sandbox completed during the run.`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
