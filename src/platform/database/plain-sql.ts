import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { DatabaseClient } from '#src/shared/database-client.js';
import { isEmbeddedEngine } from '#src/shared/embedded-engine.js';

/**
 * A CTE (`no_flush`) that has its statement's commit not wait for the WAL flush (`synchronous_commit`
 * off for that transaction only), for a write a crash may lose: the statement must read from it.
 */
export const NO_FLUSH_CTE = `no_flush AS (SELECT set_config('synchronous_commit', 'off', true))`;

/** Connections of the hot-path pool of each replica (beside TypeORM's `DATABASE_POOL_SIZE`). */
export const HOT_PATH_POOL_SIZE = 4;

/**
 * Where hot-path statements go. On PostgreSQL, a pool of their own whose sessions plan a prepared
 * statement once (`plan_cache_mode = force_generic_plan`): the group statements take arrays, whose
 * length the planner cannot know in a generic plan, so by default it plans every execution anew,
 * which costs more server CPU than running it (measured: 0.58 → 0.24 ms of backend CPU for the
 * admission). A plan kept for the connection's life must not depend on how big a table was when it
 * was made (a statement first run on an empty `access_log` would scan it, row by row, ever after:
 * seen with autovacuum off, where no ANALYZE replans it), and every hot-path statement finds its rows
 * by key, so these sessions never choose a sequential scan (`enable_seqscan = off`). TypeORM's pool
 * keeps the default planning. The embedded engine (PGlite behind its socket server) runs every
 * connection in one session, where a name prepared by one connection clashes with the next and a
 * session setting would reach TypeORM's statements too: there, statements go unnamed through
 * TypeORM's pool.
 */
interface HotPath {
  pool: pg.Pool;
  named: boolean;
  /** Connections taken for good by queryOnOwnConnection: given back before the pool is ended. */
  held: Set<pg.PoolClient>;
}

const hotPaths = new WeakMap<DataSource, Promise<HotPath>>();

/** The hot path of a data source, opened on first use and ended when the data source is destroyed. */
export function hotPathOf(dataSource: DataSource): Promise<HotPath> {
  let known = hotPaths.get(dataSource);
  if (!known) {
    known = openHotPath(dataSource);
    hotPaths.set(dataSource, known);
    // A database that could not answer is asked again by the next statement.
    known.catch(() => hotPaths.delete(dataSource));
  }
  return known;
}

async function openHotPath(dataSource: DataSource): Promise<HotPath> {
  const shared = (dataSource.driver as PostgresDriver).master as pg.Pool;
  if (await isEmbeddedEngine(shared)) return { pool: shared, named: false, held: new Set() };
  const Pool = shared.constructor as typeof pg.Pool;
  const options = shared.options as pg.PoolConfig;
  const pool = new Pool({
    ...options,
    password: options.password, // not enumerable in pg-pool's copy
    Client: DatabaseClient,
    max: HOT_PATH_POOL_SIZE,
    // Kept open: a new connection would prepare and plan every statement again.
    idleTimeoutMillis: 0,
    options: '-c plan_cache_mode=force_generic_plan -c enable_seqscan=off',
  });
  // An idle connection that breaks (server restart) is dropped by the pool; the next statement opens
  // another, or fails and is answered like any database failure. Without a listener it would crash.
  pool.on('error', () => undefined);
  const held = new Set<pg.PoolClient>();
  const destroy = dataSource.destroy.bind(dataSource);
  dataSource.destroy = async () => {
    for (const client of held) client.release();
    held.clear();
    await pool.end();
    return destroy();
  };
  return { pool, named: true, held };
}

/** Names of statements built per call, by prefix and text (a digest each, computed once). */
const builtNames = new Map<string, string>();

/**
 * The name of a statement whose text is built per call (the columns it writes, the listeners' CTEs
 * vary): `prefix` and a digest of the text, so that each text is prepared under a name of its own.
 */
export function builtStatementName(prefix: string, text: string): string {
  const key = `${prefix}\0${text}`;
  let name = builtNames.get(key);
  if (!name) {
    name = `${prefix}:${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
    builtNames.set(key, name);
  }
  return name;
}

/**
 * Plain parameterised SQL on the hot path: straight to a `pg` pool (no query runner, no builder, no
 * row mapping), as a named prepared statement, so each connection parses and plans it once (see
 * HotPath). The statement's text belongs to the module that owns its tables; the name must be unique.
 */
export class PlainSql {
  /** The hot path once opened (no wait for it on every statement). */
  private opened?: HotPath;

  constructor(private readonly dataSource: DataSource) {}

  async query<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const { pool, named } = (this.opened ??= await hotPathOf(this.dataSource));
    const result = await pool.query<T & pg.QueryResultRow>(
      named ? { name, text, values } : { text, values },
    );
    return result.rows;
  }

  /** The connection queryOnOwnConnection keeps, once taken; `taking` while it is being taken. */
  private own?: pg.PoolClient;
  private taking?: Promise<pg.PoolClient>;

  /**
   * `query` on a connection of the hot-path pool that this PlainSql keeps for itself, written to the
   * socket in the same turn: the pool hands a connection over only in a later tick, after everything
   * already queued in this one (for a group statement sent as the previous one answers, StatementGroup,
   * that is the whole continuation of the calls it answered). Statements on it run one after another,
   * so it suits one statement group. A connection that fails a statement or breaks while idle is
   * closed, and the next statement takes another. On the embedded engine, `query`.
   */
  async queryOnOwnConnection<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const hotPath = (this.opened ??= await hotPathOf(this.dataSource));
    if (!hotPath.named) return this.query(name, text, values);
    const client = this.own ?? (await (this.taking ??= this.takeConnection(hotPath)));
    try {
      const result = await client.query<T & pg.QueryResultRow>({ name, text, values });
      return result.rows;
    } catch (error) {
      this.drop(hotPath, client, error);
      throw error;
    }
  }

  private async takeConnection(hotPath: HotPath): Promise<pg.PoolClient> {
    try {
      const client = await hotPath.pool.connect();
      hotPath.held.add(client);
      // Checked out, it has no pool listener: a break while it is kept idle here must drop it.
      client.on('error', (error) => this.drop(hotPath, client, error));
      this.own = client;
      return client;
    } finally {
      this.taking = undefined;
    }
  }

  /** Closes a connection this PlainSql kept (once), so that the next statement takes another. */
  private drop(hotPath: HotPath, client: pg.PoolClient, error: unknown): void {
    if (!hotPath.held.delete(client)) return;
    if (this.own === client) this.own = undefined;
    client.release(error instanceof Error ? error : new Error(String(error)));
  }
}
