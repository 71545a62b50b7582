import { execFile, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startEmbeddedPostgres } from './embedded/embedded-postgres.js';

const SERVER_SCRIPT = fileURLToPath(new URL('./embedded/pglite-server.mjs', import.meta.url));
/** The longest a backup may take before the command gives up waiting. */
const BACKUP_TIMEOUT_MS = 30 * 60_000;

/**
 * A consistent copy of the embedded engine's data directory while it runs: the engine (the gateway's,
 * or one started for the purpose) writes it as a gzipped tar between two exchanges, outside any
 * transaction. Returns the archive's size in bytes.
 */
export async function backupEmbedded(dataDir: string, file: string): Promise<number> {
  if (dataDir === 'memory://')
    throw new Error('EMBEDDED_DB_DIR=memory:// keeps nothing to back up');
  const directory = resolve(dataDir);
  const target = resolve(file);
  // Joins the running engine, or starts one (stopped again below).
  const engine = await startEmbeddedPostgres(directory);
  try {
    const { pid } = JSON.parse(readFileSync(`${directory}.server.json`, 'utf8')) as { pid: number };
    const id = randomUUID();
    const answerFile = `${directory}.backup-${id}.json`;
    writeFileSync(`${directory}.backup-request.json`, JSON.stringify({ id, file: target }), {
      mode: 0o600,
    });
    process.kill(pid, 'SIGUSR2');
    for (let waited = 0; !existsSync(answerFile); waited += 100) {
      if (waited > BACKUP_TIMEOUT_MS) throw new Error('the embedded engine wrote no backup');
      await sleep(100);
    }
    const answer = JSON.parse(readFileSync(answerFile, 'utf8')) as {
      ok: boolean;
      bytes?: number;
      error?: string;
    };
    rmSync(answerFile, { force: true });
    if (!answer.ok)
      throw new Error(`the embedded engine could not write the backup: ${answer.error}`);
    return answer.bytes ?? statSync(target).size;
  } finally {
    await engine.stop();
  }
}

/** Makes a new data directory from a backup (the directory must not exist, or be empty). */
export async function restoreEmbedded(file: string, dataDir: string): Promise<void> {
  const directory = resolve(dataDir);
  if (existsSync(directory) && readdirSync(directory).length > 0)
    throw new Error(`${directory} is not empty: restore into a new data directory`);
  const child = fork(SERVER_SCRIPT, [directory, '--restore', resolve(file)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`restoring ${file} into ${directory} failed (exit ${code})`);
}

/** pg_dump in its custom format (-Fc), the input of pg_restore. */
export async function backupPostgres(url: string, file: string): Promise<number> {
  await promisify(execFile)('pg_dump', [
    '--format=custom',
    '--file',
    resolve(file),
    '--dbname',
    url,
  ]);
  return statSync(resolve(file)).size;
}
