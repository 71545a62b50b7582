import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The machine's PostgreSQL server binaries (Debian keeps them under /usr/lib/postgresql/<major>/bin). */
function binaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const major = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const bin = major && join(root, major, 'bin');
  return bin && existsSync(join(bin, 'pg_ctl')) ? bin : undefined;
}

export const privatePostgresAvailable = binaries() !== undefined;

/**
 * A PostgreSQL cluster of one test's own (initdb in a temporary directory, its own port), so that the
 * test can restart the server (pg_ctl restart, what pg_ctlcluster does) without touching the machine's
 * cluster that every other test uses. As root, the server runs as the `postgres` user, as Debian's does.
 */
export class PrivatePostgres {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static start(port: number): PrivatePostgres {
    const bin = binaries();
    if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
    const base = mkdtempSync(join(tmpdir(), 'portico-pg-'));
    const dir = join(base, 'data');
    const cluster = new PrivatePostgres(bin, dir, port);
    if (process.getuid?.() === 0) {
      const { uid, gid } = ids('postgres');
      chmodSync(base, 0o755);
      chownSync(base, uid, gid);
    }
    cluster.run('initdb', ['-D', dir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    cluster.pgCtl('start');
    return cluster;
  }

  /** Stops the server (fast: every session ended) and starts it again on the same port. */
  restart(): void {
    this.pgCtl('restart', ['-m', 'fast']);
  }

  stop(): void {
    try {
      this.pgCtl('stop', ['-m', 'immediate']);
    } finally {
      rmSync(join(this.dir, '..'), { recursive: true, force: true });
    }
  }

  private pgCtl(action: string, extra: string[] = []): void {
    this.run('pg_ctl', [
      action,
      '-D',
      this.dir,
      '-w',
      '-s',
      '-l',
      join(this.dir, '..', 'server.log'),
      '-o',
      `-p ${this.port} -k ${join(this.dir, '..')} -c listen_addresses=127.0.0.1 -c fsync=off`,
      ...extra,
    ]);
  }

  private run(tool: string, args: string[]): void {
    const command = join(this.bin, tool);
    if (process.getuid?.() === 0)
      execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
    else execFileSync(command, args, { stdio: 'pipe' });
  }
}

function ids(user: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, user]).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}
