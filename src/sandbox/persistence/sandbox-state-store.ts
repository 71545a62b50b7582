import type pg from 'pg';
import { databasePool } from '#src/shared/database-client.js';
import { isEmbeddedEngine } from '#src/shared/embedded-engine.js';
import type {
  BankStateStore,
  StateChanges,
  StateKind,
} from '../open-banking/bank/state-journal.js';

/** A PostgreSQL identifier the store may create (it is interpolated into DDL). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The rows of one side of the sandbox, by kind (the bank's StateKind, the card side's kinds). */
export interface StoredRows<K extends string> {
  reset?: true;
  upserts: { kind: K; id: string; data: unknown }[];
  deletes: { kind: K; id: string }[];
}

/**
 * The sandbox's state in PostgreSQL (or the embedded engine), in a schema of its own (`sandbox` by
 * default) that the gateway never reads: one table of (kind, id) -> JSON rows per side of the
 * sandbox (`state` for the open-banking bank, `card_state` for the card side), created on first
 * use. One connection: writes arrive in the order the changes were made.
 */
export class SandboxStateStore<K extends string = StateKind> implements BankStateStore {
  private readonly table: string;

  private constructor(
    private readonly pool: pg.Pool,
    schema: string,
    table: string,
    /**
     * Whether writes go as named statements (parsed and planned once per connection). Not on the
     * embedded engine, where every connection shares one session (PlainSql's hot path makes the same
     * choice).
     */
    private readonly named: boolean,
  ) {
    this.table = `"${schema}".${table}`;
  }

  static async open<K extends string = StateKind>(
    url: string,
    schema = 'sandbox',
    table = 'state',
  ): Promise<SandboxStateStore<K>> {
    if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid sandbox schema name: ${schema}`);
    if (!SCHEMA_NAME.test(table)) throw new Error(`invalid sandbox table name: ${table}`);
    // An idle connection the server closes must not take the process down, nor a connecting one.
    const pool = databasePool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
    let store: SandboxStateStore<K>;
    try {
      store = new SandboxStateStore<K>(pool, schema, table, !(await isEmbeddedEngine(pool)));
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

  async load(): Promise<{ kind: K; id: string; data: unknown }[]> {
    const { rows } = await this.pool.query<{ kind: K; id: string; data: unknown }>(
      `SELECT kind, id, data FROM ${this.table}`,
    );
    return rows;
  }

  async write(changes: StateChanges | StoredRows<K>): Promise<void> {
    // Named (on PostgreSQL): each is parsed and planned once per connection, not at every write.
    const statements: [string, string, unknown[]][] = [];
    if (changes.reset) statements.push(['reset', `DELETE FROM ${this.table}`, []]);
    if (changes.deletes.length > 0)
      statements.push([
        'delete',
        `DELETE FROM ${this.table} t USING unnest($1::text[], $2::text[]) AS d(kind, id)
          WHERE t.kind = d.kind AND t.id = d.id`,
        [changes.deletes.map((d) => d.kind), changes.deletes.map((d) => d.id)],
      ]);
    if (changes.upserts.length > 0)
      statements.push([
        'upsert',
        `INSERT INTO ${this.table} (kind, id, data)
           SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
         ON CONFLICT (kind, id) DO UPDATE SET data = excluded.data, updated_at = now()`,
        [
          changes.upserts.map((row) => row.kind),
          changes.upserts.map((row) => row.id),
          changes.upserts.map((row) => JSON.stringify(row.data)),
        ],
      ]);
    const named = ([kind, text, values]: [string, string, unknown[]]) =>
      this.named ? { name: `sandbox-state:${this.table}:${kind}`, text, values } : { text, values };
    if (statements.length === 1) {
      await this.pool.query(named(statements[0]));
      return;
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const statement of statements) await client.query(named(statement));
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
