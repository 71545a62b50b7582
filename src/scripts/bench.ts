// `npm run bench`: start-up time, idle memory and request latency of the real gateway process,
// on the embedded engine and (when reachable) on PostgreSQL. Prints figures; asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ClientCredentials } from '../upstreams/open-banking/qwac/client-credentials.js';
import { ensureDevCertificates } from '../sandbox/dev-certificates.js';
import { startSandbox } from '../sandbox/sandbox.js';
import { completeSca } from '../sandbox/scripted-psu.js';
import { UpstreamTransport } from '../upstreams/http/upstream-transport.js';
import { encodeForm } from '../upstreams/http/form-encoding.js';
import { Agent, request } from 'undici';

const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((candidate) => {
      try {
        return (
          Number(readFileSync(`/proc/${candidate}/stat`, 'utf8').split(') ')[1].split(' ')[1]) ===
          pid
        );
      } catch {
        return false;
      }
    });
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS portico_bench WITH (FORCE)`);
    await client.query(`CREATE DATABASE portico_bench`);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

interface Figures {
  readyMs: number;
  gatewayRssMiB: number;
  engineRssMiB?: number;
  p50Ms: number;
  p99Ms: number;
  requestsPerSecond: number;
  facade: { p50Ms: number; p99Ms: number; perSecond: number };
  /** p50 and p99 of a card payment through Portico and straight to the sandbox. */
  card: { portico: [number, number]; direct: [number, number] };
}

async function measure(env: Record<string, string>): Promise<Figures> {
  const port = await freePort();
  const started = performance.now();

  const child: ChildProcess = spawn(process.execPath, ['dist/main.js'], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SANDBOX_OB_PORT: '0',
      SANDBOX_SCA_PORT: '0',
      SANDBOX_CARD_PORT: '0',
      METRICS_PORT: '0',
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const key = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Demo API key \(tenant "demo", role app\): (ptk_\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${out}`)));
  });
  try {
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const gatewayRssMiB = rssMiB(child.pid as number);
    const engine = childPids(child.pid as number)[0];
    const engineRssMiB = engine ? rssMiB(engine) : undefined;

    const latencies: number[] = [];
    const url = `http://127.0.0.1:${port}/v1/me`;
    const headers = { authorization: `Bearer ${key}` };
    for (let i = 0; i < 50; i++) await fetch(url, { headers }).then((r) => r.arrayBuffer());
    const loopStart = performance.now();
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      latencies.push(performance.now() - t);
    }
    const requestsPerSecond = 500 / ((performance.now() - loopStart) / 1000);
    latencies.sort((a, b) => a - b);
    const facade = await measureFacadeReads(`http://127.0.0.1:${port}`, key);
    const card = await measureCardPayments(`http://127.0.0.1:${port}`, key, out);
    return {
      card,
      readyMs,
      gatewayRssMiB,
      engineRssMiB,
      p50Ms: latencies[249],
      p99Ms: latencies[494],
      requestsPerSecond,
      facade,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/** A consent approved by the scripted user, then 300 balance reads through the facade (local checks, access log, mTLS to the sandbox). */
async function measureFacadeReads(
  base: string,
  key: string,
): Promise<{ p50Ms: number; p99Ms: number; perSecond: number }> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const iban = 'HU75118000170000001234567817';
  const created = (await (
    await fetch(`${base}/v1/consents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        brandId: 'danube-bank',
        access: { accounts: [{ iban }], balances: [{ iban }], transactions: [{ iban }] },
        recurringIndicator: true,
        validUntil: '2099-12-31',
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
  const consent = (await (
    await fetch(`${base}/v1/consents/${created.consentId}`, { headers })
  ).json()) as { accounts: { resourceId: string }[] };
  const url = `${base}/v1/accounts/${consent.accounts[0].resourceId}/balances`;
  const readHeaders = {
    ...headers,
    'consent-id': created.consentId,
    'psu-ip-address': '192.0.2.1',
  };
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    const response = await fetch(url, { headers: readHeaders });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`balance read answered ${response.status}`);
    latencies.push(performance.now() - t);
  }
  const perSecond = 300 / ((performance.now() - started) / 1000);
  latencies.sort((a, b) => a - b);
  return { p50Ms: latencies[149], p99Ms: latencies[296], perSecond };
}

/**
 * 200 card payments (sequential) through the facade with the demo tenant's merchant, then 200 straight to
 * the sandbox's card API with a merchant of its own: what Portico adds (validation, mapping, row and
 * history, write-ahead access log, key opening, contract check).
 */
async function measureCardPayments(
  base: string,
  key: string,
  banner: string,
): Promise<{ portico: [number, number]; direct: [number, number] }> {
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
  const timed = async (send: () => Promise<number>): Promise<[number, number]> => {
    for (let i = 0; i < 20; i++) await send();
    const latencies: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const status = await send();
      if (status !== 200 && status !== 201) throw new Error(`a card payment answered ${status}`);
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);
    return [latencies[99], latencies[197]];
  };
  const portico = await timed(async () => {
    const response = await fetch(`${base}/v1/card/payments`, {
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
  const agent = new Agent({ connect: { ca: readFileSync('certs/dev/ca.pem') } });
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
  return { portico, direct };
}

function print(label: string, figures: Figures): void {
  const engine =
    figures.engineRssMiB === undefined
      ? ''
      : ` + embedded engine ${figures.engineRssMiB.toFixed(0)} MiB`;
  process.stdout.write(
    `${label}\n` +
      `  npm start to ready:      ${figures.readyMs.toFixed(0)} ms (process spawn to the ready banner, migrations included)\n` +
      `  idle RSS after 3 s:      gateway ${figures.gatewayRssMiB.toFixed(0)} MiB${engine}\n` +
      `  GET /v1/me (authenticated, rate-limited), 500 sequential: p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms, ${figures.requestsPerSecond.toFixed(0)} req/s\n` +
      `  GET /v1/accounts/{id}/balances (consent checks, access log, mTLS to the sandbox), 300 sequential: p50 ${figures.facade.p50Ms.toFixed(2)} ms, p99 ${figures.facade.p99Ms.toFixed(2)} ms, ${figures.facade.perSecond.toFixed(0)} req/s\n` +
      `  card payment, 200 sequential: through Portico p50 ${figures.card.portico[0].toFixed(2)} ms, p99 ${figures.card.portico[1].toFixed(2)} ms; straight to the sandbox p50 ${figures.card.direct[0].toFixed(2)} ms, p99 ${figures.card.direct[1].toFixed(2)} ms\n`,
  );
}

async function measureUpstream(): Promise<void> {
  const certsDir = 'certs/dev';
  ensureDevCertificates(certsDir);
  const sandbox = await startSandbox({
    certsDir,
    host: '127.0.0.1',
    openBankingPort: 0,
    scaPort: 0,
  });
  const credentials = new ClientCredentials({
    certFile: `${certsDir}/tpp.pem`,
    keyFile: `${certsDir}/tpp.key`,
    caFile: `${certsDir}/ca.pem`,
    clientCaFile: `${certsDir}/ca.pem`,
  });
  const transport = new UpstreamTransport({
    name: 'open-banking',
    baseUrl: sandbox.openBankingUrl,
    tls: { current: () => credentials.current() },
    connectTimeoutMs: 5000,
    headersTimeoutMs: 5000,
    bodyTimeoutMs: 5000,
    poolConnections: 16,
    keepAliveTimeoutMs: 30_000,
  });
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < 1000; i++) {
    const t = performance.now();
    await transport.send({ method: 'GET', path: '/brands' });
    latencies.push(performance.now() - t);
  }
  const seconds = (performance.now() - started) / 1000;
  const sequentialHandshakes = sandbox.tlsHandshakes();
  const concurrentStart = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 125; i++) await transport.send({ method: 'GET', path: '/brands' });
    }),
  );
  const concurrentSeconds = (performance.now() - concurrentStart) / 1000;
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    'Upstream transport (mTLS to the in-process sandbox, GET /brands)\n' +
      `  1,000 sequential calls: ${sequentialHandshakes} TLS handshake(s); p50 ${latencies[499].toFixed(2)} ms, p99 ${latencies[989].toFixed(2)} ms, ${(1000 / seconds).toFixed(0)} calls/s\n` +
      `  1,000 calls, 8 concurrent: ${sandbox.tlsHandshakes()} handshake(s) in all (pool of 16); ${(1000 / concurrentSeconds).toFixed(0)} calls/s\n`,
  );
  await transport.close();
  await sandbox.close();
}

async function main(): Promise<void> {
  await measureUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
  try {
    print(
      'Embedded engine (PGlite, fresh data directory)',
      await measure({ EMBEDDED_DB_DIR: join(dataDir, 'pglite') }),
    );
    print(
      'Embedded engine (PGlite, existing data directory)',
      await measure({ EMBEDDED_DB_DIR: join(dataDir, 'pglite') }),
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (await postgresReachable()) {
    const url = new URL(POSTGRES_URL);
    url.pathname = '/portico_bench';
    print(`PostgreSQL (${url.host})`, await measure({ DATABASE_URL: url.toString() }));
  } else {
    process.stdout.write(
      `PostgreSQL at ${POSTGRES_URL} not reachable: skipped (set BENCH_DATABASE_URL)\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
