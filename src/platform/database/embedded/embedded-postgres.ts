import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EmbeddedPostgres {
  url: string;
  /** True when this process started the engine (and so stops it). */
  owned: boolean;
  stop(): Promise<void>;
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

/**
 * Starts the embedded engine for a data directory, or joins the one another Portico process
 * (the gateway, the CLI) already runs there: two engines on one directory would corrupt it.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const inMemory = dataDir === 'memory://';
  const directory = inMemory ? dataDir : resolve(dataDir);
  const infoFile = inMemory ? undefined : `${directory}.server.json`;

  if (infoFile) {
    mkdirSync(dirname(directory), { recursive: true });
    try {
      const info = JSON.parse(readFileSync(infoFile, 'utf8')) as ServerInfo;
      if (isAlive(info.pid) && (await portAnswers(info.port))) {
        return { url: urlFor(info.port), owned: false, stop: async () => undefined };
      }
    } catch {
      // no running engine recorded
    }
  }

  const child: ChildProcess = fork(SERVER_SCRIPT, [directory, '0'], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`embedded PostgreSQL did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      done(message.port);
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
  if (infoFile)
    writeFileSync(infoFile, JSON.stringify({ pid: child.pid ?? 0, port } satisfies ServerInfo));

  return {
    url: urlFor(port),
    owned: true,
    stop: () =>
      new Promise<void>((done) => {
        if (infoFile) rmSync(infoFile, { force: true });
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
