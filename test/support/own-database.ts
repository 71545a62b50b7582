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
 * the test database (`label` in its name); on the embedded engine a fresh in-memory engine. It starts
 * migrated, a copy of the template the global setup made (the gateway's start finds nothing to
 * migrate), or with `empty` as a new database is (a test of the migrations themselves, a restore).
 */
export async function ownDatabase(
  label: string,
  options: { empty?: boolean } = {},
): Promise<OwnDatabase> {
  const template = options.empty ? undefined : process.env.PORTICO_TEST_TEMPLATE;
  if (!options.empty && !template)
    throw new Error('PORTICO_TEST_TEMPLATE is set by the global setup');
  if (!process.env.DATABASE_URL) {
    const engine = await startEmbeddedPostgres('memory://', undefined, { from: template });
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
  await run(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
