import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';

export interface RunningProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of the pattern in stdout+stderr, or rejects after the timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of the test run minus anything that would change a child's configuration. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value !== undefined &&
      !['DATABASE_URL', 'NODE_OPTIONS', 'PORT', 'HOST', 'LOG_LEVEL', 'PORTICO_MODE'].includes(name)
    )
      env[name] = value;
  }
  return env;
}

/**
 * The data directory of this test file's processes unless a test names its own: their sandbox keys are
 * kept beside it, shared by a file's replicas, never by another file's gateways on another database
 * (which would reissue the demo key and revoke the one a test holds), and never the checkout's ./data.
 */
const FILE_DATA_DIR = join(mkdtempSync(join(tmpdir(), 'portico-process-')), 'pglite');

/** Starts a built Portico entry point (dist/…) as a real process (`nodeArgs` before the script). */
export function startProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; nodeArgs?: string[] } = {},
): RunningProcess {
  return watch(
    spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
      cwd: options.cwd,
      // Metrics on a free port unless a test says otherwise: 9464 may be taken by a parallel run.
      env: { ...baseEnv(), METRICS_PORT: '0', EMBEDDED_DB_DIR: FILE_DATA_DIR, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/**
 * Runs an npm script (`npm start`) as a person would, as the leader of its own process group, so that
 * a test can signal the whole group as a terminal does and see whether any process of it is left.
 */
export function startNpmScript(script: string, env: Record<string, string>): RunningProcess {
  return watch(
    spawn('npm', [script], {
      env: { ...baseEnv(), METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    }),
  );
}

/** Whether any process is left in the group (of a child started by startNpmScript). */
export function processGroupAlive(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** SIGKILL to every process of the group that is left; for `finally` blocks. */
export function killProcessGroup(groupId: number | undefined): void {
  if (groupId === undefined) return;
  try {
    process.kill(-groupId, 'SIGKILL');
  } catch {
    // nothing left
  }
}

/** Whether a listener can be opened on the port, i.e. no process holds it. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

function watch(child: ChildProcess): RunningProcess {
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const match = (out + err).match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    check();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    check();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const match = (out + err).match(pattern);
        if (match) return resolve(match);
        const timer = setTimeout(
          () =>
            reject(new Error(`timed out waiting for ${pattern}\nstdout:\n${out}\nstderr:\n${err}`)),
          timeoutMs,
        );
        waiters.push({ pattern, resolve: (m) => (clearTimeout(timer), resolve(m)) });
        void exited.then(({ code }) => {
          clearTimeout(timer);
          reject(
            new Error(
              `process exited (${code}) before ${pattern}\nstdout:\n${out}\nstderr:\n${err}`,
            ),
          );
        });
      });
    },
  };
}

/** Runs a built entry point to completion. */
export async function runProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const running = startProcess(script, args, env);
  const { code } = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

/**
 * A port no process listens on, for a server that must know its address before it starts (a gateway
 * whose SCA callback points at itself, a child process given its port). Taken below the kernel's
 * ephemeral range, so that no outgoing connection and no `listen(0)` of another test can take it
 * between this answer and the listen; each jest worker draws from its own slice, so that two workers
 * never hand out the same port. (Asking the kernel for an ephemeral port and closing it raced with the
 * other workers' connections: CI once saw EADDRINUSE.)
 */
export async function freePort(): Promise<number> {
  const slice = Math.floor((ephemeralLow - FREE_PORT_FLOOR) / FREE_PORT_SLICES);
  const worker = Math.max(1, Number(process.env.JEST_WORKER_ID ?? '1') || 1);
  // TEST_PORT_SLICE moves a whole run to other slices, so that two suites on one machine never meet.
  const offset = Number(process.env.TEST_PORT_SLICE ?? '0') || 0;
  const base = FREE_PORT_FLOOR + ((worker - 1 + offset) % FREE_PORT_SLICES) * slice;
  for (let attempt = 0; attempt < slice; attempt++) {
    const port = base + (freePortCursor++ % slice);
    if (await portIsFree(port)) return port;
  }
  throw new Error(`no free port in ${base}..${base + slice - 1}`);
}

const FREE_PORT_SLICES = 16;
/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
const ephemeralLow = (() => {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 4096 ? low : 32768;
  } catch {
    return 32768;
  }
})();
const FREE_PORT_FLOOR = Math.max(2048, ephemeralLow - 16 * 1024);
/** Starts anywhere in the slice, so that a restarted worker does not reuse what its predecessor's children hold. */
let freePortCursor = Math.floor(Math.random() * 1024);

/** The in-process sandbox on free ports, so that these tests never depend on 8443 and 8081 being free. */
export const FREE_SANDBOX_PORTS = {
  SANDBOX_OB_PORT: '0',
  SANDBOX_SCA_PORT: '0',
  SANDBOX_CARD_PORT: '0',
  SANDBOX_POS_PORT: '0',
};
