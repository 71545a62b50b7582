import pg from 'pg';
import type {
  BankStateStore,
  StateChanges,
  StateKind,
  StateRow,
} from '../open-banking/bank/state-journal.js';

/** A PostgreSQL identifier the store may create (it is interpolated into DDL). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The sandbox bank's state in PostgreSQL (or the embedded engine), in a schema of its own
 * (`sandbox` by default) that the gateway never reads: one table `state` of (kind, id) -> JSON rows,
 * created on first use. One connection: writes arrive in the order the bank made the changes.
 */
export class SandboxStateStore implements BankStateStore {
  private readonly table: string;

  private constructor(
    private readonly pool: pg.Pool,
    schema: string,
  ) {
    this.table = `"${schema}".state`;
  }

  static async open(url: string, schema = 'sandbox'): Promise<SandboxStateStore> {
    if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid sandbox schema name: ${schema}`);
    const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
    // An idle connection the server closes must not take the process down.
    pool.on('error', () => undefined);
    const store = new SandboxStateStore(pool, schema);
    try {
      await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await pool.query(
        `CREATE TABLE IF NOT EXISTS ${store.table} (
           kind text NOT NULL,
           id text NOT NULL,
           data jsonb NOT NULL,
           updated_at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (kind, id)
         )`,
      );
    } catch (error) {
      await pool.end();
      throw error;
    }
    return store;
  }

  async load(): Promise<StateRow[]> {
    const { rows } = await this.pool.query<{ kind: StateKind; id: string; data: unknown }>(
      `SELECT kind, id, data FROM ${this.table}`,
    );
    return rows;
  }

  async write(changes: StateChanges): Promise<void> {
    const statements: [string, unknown[]][] = [];
    if (changes.reset) statements.push([`DELETE FROM ${this.table}`, []]);
    if (changes.deletes.length > 0)
      statements.push([
        `DELETE FROM ${this.table} t USING unnest($1::text[], $2::text[]) AS d(kind, id)
          WHERE t.kind = d.kind AND t.id = d.id`,
        [changes.deletes.map((d) => d.kind), changes.deletes.map((d) => d.id)],
      ]);
    if (changes.upserts.length > 0)
      statements.push([
        `INSERT INTO ${this.table} (kind, id, data)
           SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
         ON CONFLICT (kind, id) DO UPDATE SET data = excluded.data, updated_at = now()`,
        [
          changes.upserts.map((row) => row.kind),
          changes.upserts.map((row) => row.id),
          changes.upserts.map((row) => JSON.stringify(row.data)),
        ],
      ]);
    if (statements.length === 1) {
      await this.pool.query(...statements[0]);
      return;
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const [sql, values] of statements) await client.query(sql, values);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
