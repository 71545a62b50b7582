// Child process that serves the embedded PostgreSQL engine (PGlite) on a loopback port.
// Run by embedded-postgres.ts; it exits when its parent goes away, so no engine is left orphaned.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { spawn } from 'node:child_process';
import { Blob } from 'node:buffer';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [dataDir, portArg, fromArchive] = process.argv.slice(2);
const inMemory = dataDir === 'memory://';

// `pglite-server.mjs <dir> --initialise`: makes the data directory and exits.
if (portArg === '--initialise') {
  await (await PGlite.create(dataDir)).close();
  process.exit(0);
}

// `pglite-server.mjs <dir> --restore <backup.tar.gz>`: makes the data directory from a backup and exits.
if (portArg === '--restore') {
  const archive = readFileSync(process.argv[4]);
  const db = await PGlite.create(dataDir, { loadDataDir: new Blob([archive]) });
  await db.query('SELECT 1');
  await db.close();
  process.exit(0);
}

/**
 * A fresh data directory is made by a process of its own: PGlite runs initdb in a second engine and the
 * initdb program beside the one it serves from, and the memory they took stays with the process (about
 * 800 MiB resident, against 300 MiB for an engine that opens a directory made before).
 */
async function initialise(directory) {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), directory, '--initialise'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const code = await new Promise((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`initialising ${directory} failed (exit ${code})`);
}

const SYNC = 0x53; // 'S': ends an extended-protocol exchange (Parse, Bind, Describe, Execute, Sync)
const QUERY = 0x51; // 'Q': a simple query is an exchange of its own
const TERMINATE = 0x58; // 'X'

/** A startup message has no type byte: it begins with its length, whose high byte is 0. */
function endsExchange(message) {
  return (
    message[0] === 0 || message[0] === SYNC || message[0] === QUERY || message[0] === TERMINATE
  );
}

/**
 * PGlite has one session, shared by every client connection. pglite-socket's own queue interleaves
 * protocol messages of different connections between Parse and Sync, so one connection's Bind can meet
 * another's unnamed statement under concurrent parameterised queries. This queue gives the session to
 * one connection for a whole exchange (up to Sync or a simple query), and for a whole transaction.
 */
class ExchangeQueue {
  constructor(db) {
    this.db = db;
    this.queue = [];
    this.owner = null;
    this.running = false;
  }

  /** Runs `job` alone on the session, between exchanges and outside any transaction. */
  whenIdle(job) {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId: Symbol('job'), job, resolve, reject });
      void this.drain();
    });
  }

  enqueue(handlerId, message, onData) {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.drain();
    });
  }

  async drain() {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const index =
          this.owner === null ? 0 : this.queue.findIndex((item) => item.handlerId === this.owner);
        if (index < 0) break; // the owner is mid-exchange or mid-transaction: wait for its next message
        const [item] = this.queue.splice(index, 1);
        if (item.job) {
          await item.job().then(item.resolve, item.reject);
          continue;
        }
        this.owner = item.handlerId;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
          item.resolve(bytes);
        } catch (error) {
          item.reject(error);
        }
        if (endsExchange(item.message) && !this.db.isInTransaction()) this.owner = null;
      }
    } finally {
      this.running = false;
    }
  }

  getQueueLength() {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId) {
    this.queue = this.queue.filter((item) => {
      if (item.handlerId !== handlerId) return true;
      item.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  async clearTransactionIfNeeded(handlerId) {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
    void this.drain();
  }
}

if (!inMemory && !existsSync(join(dataDir, 'PG_VERSION'))) await initialise(dataDir);
// An in-memory engine starts empty (initdb), or from a data directory's archive (`fromArchive`, written
// by a `dump` request below): loading one takes well under a second where initdb takes seconds.
const db = inMemory
  ? await PGlite.create(
      fromArchive ? { loadDataDir: new Blob([readFileSync(fromArchive)]) } : undefined,
    )
  : await PGlite.create(dataDir);
// In memory there is no directory to make beforehand: what initdb left is given back when the engine
// runs with --expose-gc (embedded-postgres.ts), 800 → 470 MiB.
if (inMemory) globalThis.gc?.();
const queryQueue = new ExchangeQueue(db);
const handlers = new Set();
const server = createServer((socket) => {
  const handler = new PGLiteSocketHandler({ queryQueue, closeOnDetach: true });
  handlers.add(handler);
  handler.addEventListener('close', () => handlers.delete(handler));
  handler.addEventListener('error', () => handlers.delete(handler));
  handler.attach(socket).catch(() => socket.destroy());
});
await new Promise((resolve) => server.listen(Number(portArg ?? 0), '127.0.0.1', resolve));
const port = server.address().port;

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  for (const handler of handlers) await handler.detach(true).catch(() => undefined);
  await new Promise((resolve) => server.close(resolve));
  await db.close().catch(() => undefined);
  process.exit(0);
}
// While its parent is there, the parent decides when the engine stops ('stop' over IPC): a signal to the
// whole process group (Ctrl-C, a group SIGTERM) must not take the database away before the gateway has
// finished its in-flight requests. Without a parent, a signal stops it at once.
const onSignal = () => {
  if (!process.connected) void stop();
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
process.on('message', (message) => {
  if (message === 'stop') void stop();
  // `{ dump: file }` from the parent: the data directory, as it is between two exchanges and outside any
  // transaction, written uncompressed to the file (an archive another in-memory engine can start from).
  else if (typeof message?.dump === 'string')
    void queryQueue
      .whenIdle(async () => {
        await db.exec('CHECKPOINT');
        const archive = await db.dumpDataDir('none');
        writeFileSync(message.dump, Buffer.from(await archive.arrayBuffer()), { mode: 0o600 });
      })
      .then(
        () => process.send?.({ dumped: message.dump }),
        (error) => process.send?.({ dumped: message.dump, error: String(error?.message ?? error) }),
      );
});
process.on('disconnect', stop);

// A backup (embedded-backup.ts): the request names the archive to write; the data directory is copied
// between two exchanges, outside any transaction, so the copy holds every committed transaction and
// nothing half done. Asked by SIGUSR2, so that any process may ask (the CLI is not this one's parent).
process.on('SIGUSR2', () => {
  if (inMemory) return;
  const requestFile = `${dataDir}.backup-request.json`;
  let request;
  try {
    request = JSON.parse(readFileSync(requestFile, 'utf8'));
    rmSync(requestFile, { force: true });
  } catch {
    return;
  }
  const answer = (fields) =>
    writeFileSync(`${dataDir}.backup-${request.id}.json`, JSON.stringify(fields));
  void queryQueue
    .whenIdle(async () => {
      await db.exec('CHECKPOINT');
      const archive = await db.dumpDataDir('gzip');
      const bytes = Buffer.from(await archive.arrayBuffer());
      writeFileSync(`${request.file}.partial`, bytes, { mode: 0o600 });
      renameSync(`${request.file}.partial`, request.file);
      return bytes.length;
    })
    .then(
      (bytes) => answer({ ok: true, bytes }),
      (error) => answer({ ok: false, error: String(error?.message ?? error) }),
    );
});
process.send?.({ ready: true, port });
