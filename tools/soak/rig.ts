// The soak's parts: a database (a private PostgreSQL cluster, or the embedded engine), the provider's
// sandbox in this process (its state is the provider's record the invariants compare against), and the
// gateway replicas as real processes that a fault may kill and restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { PrivatePostgres } from '../private-postgres.js';

export type Engine = 'postgres' | 'embedded';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Where the replicas keep their data, and a way in for the soak's own queries. */
export interface SoakDatabase {
  env: Record<string, string>;
  url(): Promise<string>;
  /** Restarts the server (PostgreSQL profile: pg_ctl restart of the private cluster). */
  restart?(): void;
  close(): void;
}

export async function openDatabase(engine: Engine, dir: string): Promise<SoakDatabase> {
  if (engine === 'postgres') {
    const cluster = PrivatePostgres.start(await freePort());
    return {
      env: { DATABASE_URL: cluster.url, EMBEDDED_DB_DIR: join(dir, 'pglite') },
      url: async () => cluster.url,
      restart: () => cluster.restart(),
      close: () => cluster.stop(),
    };
  }
  const dataDir = join(dir, 'pglite');
  return {
    env: { EMBEDDED_DB_DIR: dataDir },
    // Joins the engine the running gateway owns.
    url: async () => (await startEmbeddedPostgres(dataDir)).url,
    close: () => undefined,
  };
}

export async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

export function startSoakSandbox(): Promise<RunningSandbox> {
  return startSandbox({
    certsDir: 'certs/dev',
    host: '127.0.0.1',
    openBankingPort: 0,
    scaPort: 0,
    cardPort: 0,
    posPort: 0,
  });
}

/** One gateway process (a replica; on the embedded profile a primary with its workers). */
export class Replica {
  child?: ChildProcess;
  output = '';
  /** Exits the soak did not cause: any is a violation. */
  readonly unexpectedExits: string[] = [];
  private expectingExit = false;
  readonly base: string;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
    /** Where its output is kept for after the run (every start appends). */
    private readonly logFile?: string,
  ) {
    this.base = `http://127.0.0.1:${port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<string> {
    this.output = '';
    this.expectingExit = false;
    const child = spawn(process.execPath, ['dist/main.js'], {
      env: { ...cleanEnv(), ...this.env, PORT: String(this.port), PUBLIC_BASE_URL: this.base },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (chunk: Buffer) => {
      // The banner and every warning or error line; a soak's worth stays small at LOG_LEVEL=warn.
      if (this.output.length < 2_000_000) this.output += chunk.toString();
      if (this.logFile) appendFileSync(this.logFile, chunk);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', (code, signal) => {
      if (!this.expectingExit)
        this.unexpectedExits.push(`${this.name} pid ${child.pid} exited (${code ?? signal})`);
    });
    const started = Date.now();
    for (;;) {
      const match = /Operator key \(tenant "operations", role operator\): (ptk_\S+)/.exec(
        this.output,
      );
      if (match) return match[1];
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${this.name} exited at start:\n${this.output.slice(-4000)}`);
      if (Date.now() - started > 180_000)
        throw new Error(`${this.name} did not start:\n${this.output.slice(-4000)}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /** kill -9 of the process (or of the given pid of its group); resolves once it is gone. */
  async kill(pid = this.child?.pid): Promise<void> {
    const child = this.child;
    if (!child || pid === undefined) return;
    if (pid === child.pid) this.expectingExit = true;
    const exited = new Promise((done) => child.once('exit', done));
    process.kill(pid, 'SIGKILL');
    if (pid === child.pid) await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.expectingExit = true;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  }

  /** The pids of the gateway workers under a primary (GATEWAY_WORKERS > 1). */
  workerPids(): number[] {
    const parent = this.child?.pid;
    if (parent === undefined) return [];
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          return Number(stat[1]) === parent && cmdline.includes('dist/main.js');
        } catch {
          return false;
        }
      });
  }
}

/** The soak's environment minus what would change a replica's configuration. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(DATABASE_URL|NODE_OPTIONS|PORT|HOST|LOG_LEVEL)$/.test(name))
      env[name] = value;
  return env;
}

export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'portico-soak-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
