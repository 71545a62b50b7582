import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export interface EmbeddedPostgres {
  url: string;
  /** True when this process started the engine (and so stops it). */
  owned: boolean;
  stop(): Promise<void>;
  /**
   * Writes the data directory, as committed, to an archive that `startEmbeddedPostgres('memory://',
   * undefined, { from })` starts from (an engine this process started only).
   */
  dump(file: string): Promise<void>;
}

interface ServerInfo {
  pid: number;
  port: number;
}

const SERVER_SCRIPT = fileURLToPath(new URL('./pglite-server.mjs', import.meta.url));
const START_TIMEOUT_MS = 60_000;

function urlFor(port: number): string {
  return `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      done(true);
    });
    socket.on('error', () => done(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      done(false);
    });
  });
}

/** What a supervising process is told about its engine. */
export interface EngineSupervisor {
  /** The engine process died without being asked to stop; a new one is being started. */
  died(details: { pid: number | undefined; code: number | null; signal: string | null }): void;
  /** The new engine serves the same data directory on the same port. */
  restarted(details: { pid: number | undefined; port: number; attempt: number }): void;
  /** A restart attempt failed; another follows after a pause. */
  restartFailed(details: { attempt: number; error: Error }): void;
}

/** Pauses between restart attempts of a dead engine (the last one repeats). */
const RESTART_DELAYS_MS = [0, 250, 1000, 2000, 5000];

/** Forks the engine's server on `port` (0: any) and resolves with the port it listens on. */
function forkEngine(
  directory: string,
  port: number,
  from?: string,
): Promise<{ child: ChildProcess; port: number }> {
  const child: ChildProcess = fork(
    SERVER_SCRIPT,
    [directory, String(port), ...(from ? [from] : [])],
    {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // The server collects what an in-memory engine's initdb left (pglite-server.mjs).
      execArgv: ['--expose-gc'],
    },
  );
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`embedded PostgreSQL did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      done({ child, port: message.port });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(
        new Error(
          `embedded PostgreSQL exited during start-up (code ${code}); is ${directory} used by another engine?`,
        ),
      );
    });
  });
}

/**
 * Starts the embedded engine for a data directory, or joins the one another Portico process
 * (the gateway, the CLI) already runs there: two engines on one directory would corrupt it.
 * With a supervisor (the gateway's primary process), an engine that dies is started again on the
 * same data directory and the same port, so every pool reconnects to it by itself.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  supervisor?: EngineSupervisor,
  options: { from?: string } = {},
): Promise<EmbeddedPostgres> {
  const inMemory = dataDir === 'memory://';
  if (options.from && !inMemory) throw new Error('only an in-memory engine starts from an archive');
  const directory = inMemory ? dataDir : resolve(dataDir);
  const infoFile = inMemory ? undefined : `${directory}.server.json`;

  if (infoFile) {
    mkdirSync(dirname(directory), { recursive: true });
    try {
      const info = JSON.parse(readFileSync(infoFile, 'utf8')) as ServerInfo;
      if (isAlive(info.pid) && (await portAnswers(info.port))) {
        return {
          url: urlFor(info.port),
          owned: false,
          stop: async () => undefined,
          dump: () => Promise.reject(new Error('the engine belongs to another process')),
        };
      }
    } catch {
      // no running engine recorded
    }
  }

  const started = await forkEngine(directory, 0, options.from);
  const port = started.port;
  let child = started.child;
  let stopping = false;
  const record = () => {
    if (infoFile)
      writeFileSync(infoFile, JSON.stringify({ pid: child.pid ?? 0, port } satisfies ServerInfo));
  };
  record();

  const restart = async (attempt: number): Promise<void> => {
    const delay = RESTART_DELAYS_MS[Math.min(attempt, RESTART_DELAYS_MS.length - 1)]!;
    if (delay) await sleep(delay);
    if (stopping) return;
    try {
      ({ child } = await forkEngine(directory, port, options.from));
      if (stopping) {
        child.send?.('stop');
        return;
      }
      record();
      watch();
      supervisor?.restarted({ pid: child.pid, port, attempt: attempt + 1 });
    } catch (error) {
      supervisor?.restartFailed({ attempt: attempt + 1, error: error as Error });
      return restart(attempt + 1);
    }
  };
  const watch = () => {
    if (!supervisor) return;
    const watched = child;
    watched.once('exit', (code, signal) => {
      if (stopping || watched !== child) return;
      supervisor.died({ pid: watched.pid, code, signal });
      void restart(0);
    });
  };
  watch();

  return {
    url: urlFor(port),
    owned: true,
    stop: () =>
      new Promise<void>((done) => {
        stopping = true;
        if (infoFile) rmSync(infoFile, { force: true });
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        if (child.connected) child.send('stop');
        else child.kill('SIGTERM');
      }),
    dump: (file) =>
      new Promise<void>((done, fail) => {
        const answer = (message: { dumped?: string; error?: string }) => {
          if (message?.dumped !== file) return;
          child.off('message', answer);
          if (message.error)
            fail(new Error(`dumping the embedded engine failed: ${message.error}`));
          else done();
        };
        child.on('message', answer);
        child.send({ dump: file });
      }),
  };
}
