import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { testDatabaseUrl } from './test-gateway.js';

export interface OwnDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of one test file's own, so that its rows and the other files' never meet (a resolver
 * working another file's rows in doubt, a tampered audit chain). On PostgreSQL a fresh database beside
 * the test database (`label` in its name); on the embedded engine a fresh in-memory engine.
 */
export async function ownDatabase(label: string): Promise<OwnDatabase> {
  if (!process.env.DATABASE_URL) {
    const engine = await startEmbeddedPostgres('memory://');
    return { url: engine.url, drop: () => engine.stop() };
  }
  const admin = new URL(testDatabaseUrl());
  const name = `${admin.pathname.slice(1)}_${label}_${randomBytes(4).toString('hex')}`;
  admin.pathname = '/postgres';
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
