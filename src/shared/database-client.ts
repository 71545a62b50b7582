import pg from 'pg';

/**
 * The `pg` client of every pool and listener of the process: it has an error listener from birth. A pool
 * listens to its idle clients only; a client it has just connected and handed over, with no query run
 * yet, has none until its taker adds one (after an await), and a server that terminates the session
 * meanwhile (57P01, a failover) raised an unhandled 'error' that ended the process. The error also fails
 * the client's queries and marks it unusable, so a pool drops it when it comes back: nothing is lost by
 * not acting on it here.
 */
export class DatabaseClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', ignore);
  }
}

function ignore(): void {
  // The owner of the client (a query, the pool, a listener of its own) learns of the error itself.
}

/** A `pg` pool whose clients are DatabaseClients. */
export function databasePool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ ...config, Client: DatabaseClient });
  // An idle client that breaks is dropped by the pool, which tells it here: the next statement opens another.
  pool.on('error', ignore);
  return pool;
}
