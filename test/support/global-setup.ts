import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Once per test run: build dist/ and dist-tools/ (tests that start the real process use it; this file loads from it too,
 * since jest's module mapping does not apply here), pick the database (DATABASE_URL, or else an
 * embedded engine kept in memory) and bring its schema up to date. A test file's own database
 * (own-database.ts) starts from a migrated template made here: on PostgreSQL a database it is copied
 * from (CREATE DATABASE … TEMPLATE), on the embedded engine an archive of the migrated data directory
 * (an engine loads one in well under a second, where initdb takes seconds).
 */
export default async function globalSetup(): Promise<void> {
  // The product, then the tooling that reads it from dist/ (the spec and migration checks run it), each
  // when a source is newer than its last build (as `npm start` does): a run beside another (CI runs the
  // two engines' tiers at once) leaves a fresh build as it is rather than rewrite it under the other's
  // running processes.
  execFileSync(process.execPath, ['scripts/start.js', '--build-tools'], { stdio: 'inherit' });
  await import('reflect-metadata');
  const { ensureDevCertificates } = (await import(
    '../../dist/sandbox/dev-certificates.js' as string
  )) as typeof import('#src/sandbox/dev-certificates.js');
  ensureDevCertificates('certs/dev');
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions } = (await import(
    '../../dist/platform/database/data-source-options.js' as string
  )) as typeof import('#src/platform/database/data-source-options.js');
  const { runMigrationsLocked } = (await import(
    '../../dist/platform/database/migrate.js' as string
  )) as typeof import('#src/platform/database/migrate.js');
  const { startEmbeddedPostgres } = (await import(
    '../../dist/platform/database/embedded/embedded-postgres.js' as string
  )) as typeof import('#src/platform/database/embedded/embedded-postgres.js');
  const migrate = async (databaseUrl: string) => {
    const dataSource = new DataSource(dataSourceOptions(databaseUrl, 1));
    await dataSource.initialize();
    await runMigrationsLocked(dataSource);
    await dataSource.destroy();
  };
  const state = globalThis as TestRunState;
  let url = process.env.DATABASE_URL;
  if (!url) {
    const embedded = await startEmbeddedPostgres('memory://');
    state.porticoEmbedded = embedded;
    url = embedded.url;
    await migrate(url);
    const archive = join(mkdtempSync(join(tmpdir(), 'portico-test-template-')), 'pgdata.tar');
    await embedded.dump(archive);
    state.porticoTemplate = { archive };
    process.env.PORTICO_TEST_TEMPLATE = archive;
  } else {
    await migrate(url);
    const admin = new URL(url);
    const template = `${admin.pathname.slice(1)}_template`;
    admin.pathname = '/postgres';
    await adminQuery(admin.toString(), `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await adminQuery(admin.toString(), `CREATE DATABASE ${template}`);
    const templateUrl = new URL(url);
    templateUrl.pathname = `/${template}`;
    await migrate(templateUrl.toString());
    state.porticoTemplate = { database: template, adminUrl: admin.toString() };
    process.env.PORTICO_TEST_TEMPLATE = template;
  }
  process.env.PORTICO_TEST_DATABASE_URL = url;
  process.stdout.write(
    `\ntests use ${process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'the embedded engine (PGlite, in memory)'}\n`,
  );
}

/** What the global teardown (a module of its own, run in this process) stops and removes. */
export interface TestRunState {
  porticoEmbedded?: { stop(): Promise<void> };
  porticoTemplate?: { archive?: string; database?: string; adminUrl?: string };
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}
