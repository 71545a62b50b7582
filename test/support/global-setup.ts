import { execFileSync } from 'node:child_process';

/**
 * Once per test run: build dist/ and dist-tools/ (tests that start the real process use it; this file loads from it too,
 * since jest's module mapping does not apply here), pick the database (DATABASE_URL, or else an
 * embedded engine kept in memory) and bring its schema up to date.
 */
export default async function globalSetup(): Promise<void> {
  // The product, then the tooling that reads it from dist/ (the spec and migration checks run it).
  execFileSync(process.execPath, ['scripts/build.js', 'product', 'tools'], { stdio: 'inherit' });
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
  let url = process.env.DATABASE_URL;
  if (!url) {
    const embedded = await startEmbeddedPostgres('memory://');
    (globalThis as { porticoEmbedded?: { stop(): Promise<void> } }).porticoEmbedded = embedded;
    url = embedded.url;
  }
  process.env.PORTICO_TEST_DATABASE_URL = url;
  const dataSource = new DataSource(dataSourceOptions(url, 1));
  await dataSource.initialize();
  await runMigrationsLocked(dataSource);
  await dataSource.destroy();
  process.stdout.write(
    `\ntests use ${process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'the embedded engine (PGlite, in memory)'}\n`,
  );
}
