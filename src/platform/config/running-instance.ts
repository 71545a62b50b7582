import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { AppConfig } from './app-config.js';

/** What a running Portico records beside its data directory, so that a second start can name it. */
export interface RunningInstance {
  pid: number;
  url: string;
  startedAt: string;
}

/** `portico-running.json` beside the embedded engine's data directory; none with `memory://`. */
function runningFile(embeddedDir: string): string | undefined {
  return embeddedDir === 'memory://'
    ? undefined
    : join(dirname(embeddedDir), 'portico-running.json');
}

/** Written once the gateway listens; removed when it stops (a kill -9 leaves it: its pid is checked). */
export function recordRunning(config: AppConfig): void {
  const file = runningFile(config.database.embeddedDir);
  if (!file) return;
  const instance: RunningInstance = {
    pid: process.pid,
    url: config.http.publicBaseUrl,
    startedAt: new Date().toISOString(),
  };
  try {
    mkdirSync(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, `${JSON.stringify(instance, null, 2)}\n`);
    renameSync(partial, file);
    process.once('exit', () => forgetRunning(file));
  } catch {
    // A read-only place: a second start then finds only its busy ports.
  }
}

function forgetRunning(file: string): void {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<RunningInstance>;
    if (kept.pid === process.pid) rmSync(file, { force: true });
  } catch {
    // gone already
  }
}

/**
 * The Portico recorded in `file` that still runs: its process is alive (not this one) and its address
 * answers, so that a stale file whose process id was reused names nothing.
 */
async function runningPortico(file: string | undefined): Promise<RunningInstance | undefined> {
  if (!file) return undefined;
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<RunningInstance>;
    if (typeof kept.pid !== 'number' || kept.pid === process.pid || typeof kept.url !== 'string')
      return undefined;
    process.kill(kept.pid, 0);
    const live = await fetch(`${kept.url}/health/live`, { signal: AbortSignal.timeout(2000) });
    return live.ok ? (kept as RunningInstance) : undefined;
  } catch {
    return undefined; // no file, its process is gone, or what runs there is not it
  }
}

/**
 * The configuration with the upstream addresses a gateway of the same configuration serves from its
 * in-process sandbox (sandbox mode, UPSTREAM_OB_BASE_URL unset; SANDBOX_*_PORT not 0), so that another
 * process (the CLI's reconcile) reaches the same bank, card API and POS provider as the gateway.
 */
export function withSandboxUpstreams(config: AppConfig): AppConfig {
  if (config.mode !== 'sandbox' || config.upstreams.openBanking.baseUrl) return config;
  const at = (port: number | undefined) => (port ? `https://localhost:${port}` : undefined);
  const { openBankingPort, cardPort, posPort } = config.sandbox;
  const { openBanking, card, pos } = config.upstreams;
  return {
    ...config,
    upstreams: {
      ...config.upstreams,
      openBanking: { ...openBanking, baseUrl: at(openBankingPort) },
      card: { ...card, baseUrl: card.baseUrl ?? at(cardPort) },
      pos: { ...pos, baseUrl: pos.baseUrl ?? at(posPort) },
    },
  };
}

/** The listeners a started process opens, each with the variable that moves it and its host. */
export function listeners(config: AppConfig): { variable: string; port: number; host: string }[] {
  const sandbox = config.mode === 'sandbox' && !config.upstreams.openBanking.baseUrl;
  return [
    { variable: 'PORT', port: config.http.port, host: config.http.host },
    { variable: 'METRICS_PORT', port: config.metrics.port ?? 0, host: config.metrics.host },
    ...(sandbox
      ? [
          { variable: 'SANDBOX_OB_PORT', port: config.sandbox.openBankingPort },
          { variable: 'SANDBOX_SCA_PORT', port: config.sandbox.scaPort },
          { variable: 'SANDBOX_CARD_PORT', port: config.sandbox.cardPort ?? 0 },
          { variable: 'SANDBOX_POS_PORT', port: config.sandbox.posPort ?? 0 },
        ].map((listener) => ({ ...listener, host: config.sandbox.host }))
      : []),
  ].filter((listener) => listener.port > 0);
}

function portIsFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code !== 'EADDRINUSE'));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

const SECOND_START =
  'PORT=0 METRICS_PORT=0 SANDBOX_OB_PORT=0 SANDBOX_SCA_PORT=0 SANDBOX_CARD_PORT=0 SANDBOX_POS_PORT=0 EMBEDDED_DB_DIR=./data-2/pglite npm start';

/**
 * Why this start cannot go on, said once, before anything is opened: a Portico already running on the
 * same data directory (where, its process id, how to start a second one beside it), or every port that
 * is taken with the variable that moves it. Undefined when nothing stands in the way.
 */
export async function startBlocked(config: AppConfig): Promise<string | undefined> {
  // The data directory is the embedded engine's: with DATABASE_URL, replicas share PostgreSQL by design.
  const running = config.database.url
    ? undefined
    : await runningPortico(runningFile(config.database.embeddedDir));
  if (running)
    return [
      `Portico is already running on this data directory (${config.database.embeddedDir}): process ${running.pid}, ${running.url} (Swagger UI ${running.url}/docs), started ${running.startedAt}.`,
      `  Use that one, stop it (kill ${running.pid}, or Ctrl-C in its terminal), or start a second one beside it, with its own data and any free ports:`,
      `  ${SECOND_START}`,
    ].join('\n');
  const all = listeners(config);
  const free = await Promise.all(all.map(({ port, host }) => portIsFree(port, host)));
  const busy = all.filter((_, index) => !free[index]);
  if (busy.length === 0) return undefined;
  if (busy.length === 1) {
    const [{ port, host, variable }] = busy;
    return `port ${port} on ${host} is already in use (EADDRINUSE): another program, or another Portico, listens there. Stop it, or start with ${variable}=<another port> (0: any free port).`;
  }
  return [
    `ports ${busy.map(({ port, variable }) => `${port} (${variable})`).join(', ')} are already in use: another program, or another Portico, listens there.`,
    `  Stop it, or start with ${busy.map(({ variable }) => `${variable}=<another port>`).join(' ')} (0: any free port).`,
  ].join('\n');
}
