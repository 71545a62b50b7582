import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/**
 * Whether the server keeps prepared statements per connection. The embedded engine (PGlite behind its
 * socket server) runs every connection in one session, where a name prepared by one connection clashes
 * with the next: there, statements go unnamed. Asked once per data source.
 */
const perConnection = new WeakMap<DataSource, Promise<boolean>>();

function preparesPerConnection(dataSource: DataSource, pool: pg.Pool): Promise<boolean> {
  let known = perConnection.get(dataSource);
  if (!known) {
    known = pool
      .query<{ version: string }>('SELECT version()')
      .then((result) => !/PGlite/i.test(result.rows[0]?.version ?? ''));
    perConnection.set(dataSource, known);
  }
  return known;
}

/**
 * Plain parameterised SQL on the hot path: straight to the `pg` pool TypeORM opened (no query runner,
 * no builder, no row mapping), as a named prepared statement, so each connection parses and plans it
 * once. The statement's text belongs to the module that owns its tables; the name must be unique.
 */
export class PlainSql {
  constructor(private readonly dataSource: DataSource) {}

  private get pool(): pg.Pool {
    return (this.dataSource.driver as PostgresDriver).master as pg.Pool;
  }

  async query<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const pool = this.pool;
    const named = await preparesPerConnection(this.dataSource, pool);
    const result = await pool.query<T & pg.QueryResultRow>(
      named ? { name, text, values } : { text, values },
    );
    return result.rows;
  }
}
