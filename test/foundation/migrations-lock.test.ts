import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { runMigrationsLocked } from '#src/platform/database/migrate.js';
import { testDatabaseUrl } from '../support/test-gateway.js';

// Two replicas starting together on a new database: the advisory lock makes them migrate in turn.
// Needs a PostgreSQL server that can create databases (the embedded engine serves one database).
const server = process.env.DATABASE_URL ? describe : describe.skip;

server('migrations at start', () => {
  it('run once when two processes migrate a fresh database at the same time', async () => {
    const name = `portico_mig_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(testDatabaseUrl());
    url.pathname = `/${name}`;
    const sources = [0, 1].map(() => new DataSource(dataSourceOptions(url.toString(), 2)));
    try {
      await Promise.all(sources.map((source) => source.initialize()));
      await Promise.all(sources.map((source) => runMigrationsLocked(source)));
      const rows: { name: string; n: string }[] = await sources[0].query(
        'SELECT name, count(*) AS n FROM schema_migrations GROUP BY name',
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => Number(row.n) !== 1)).toEqual([]);
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
