import { describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { hotPathOf, PlainSql } from '#src/platform/database/plain-sql.js';
import { testDatabaseUrl } from '../support/test-gateway.js';

// Hot-path statements are planned once per connection on PostgreSQL (their own pool, generic plans);
// everything else keeps the server's default planning. The embedded engine has one session for all.
describe('plain SQL on the hot path (PlainSql)', () => {
  const embedded = !process.env.DATABASE_URL;

  it('plans its statements once on a pool of its own, closed with the data source', async () => {
    const dataSource = await new DataSource(dataSourceOptions(testDatabaseUrl(), 2)).initialize();
    const sut = new PlainSql(dataSource);
    const setting = 'SELECT current_setting($1) AS mode';
    const [hot] = await sut.query<{ mode: string }>('test:plan-mode', setting, ['plan_cache_mode']);
    const [shared] = (await dataSource.query(setting, ['plan_cache_mode'])) as { mode: string }[];
    const { pool } = await hotPathOf(dataSource);
    if (embedded) {
      expect(hot.mode).toBe(shared.mode);
      expect(pool).toBe((dataSource.driver as unknown as { master: unknown }).master);
    } else {
      expect([hot.mode, shared.mode]).toEqual(['force_generic_plan', 'auto']);
      // Prepared by name: the same name runs again without its text being parsed anew.
      await sut.query('test:plan-mode', setting, ['plan_cache_mode']);
      const [prepared] = await sut.query<{ n: number }>(
        'test:prepared',
        `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'test:plan-mode'`,
        [],
      );
      expect(prepared.n).toBe(1);
    }
    await dataSource.destroy();
    expect((pool as unknown as { ended: boolean }).ended).toBe(true);
  });

  // A plan kept for a connection's life is made on the first runs; were it made on an empty table, a
  // sequential scan would be kept while the table grows (no ANALYZE when autovacuum is off).
  (embedded ? it.skip : it)(
    'keeps a key lookup on its index when the table grew after the plan was made',
    async () => {
      const dataSource = await new DataSource(dataSourceOptions(testDatabaseUrl(), 2)).initialize();
      try {
        const sut = new PlainSql(dataSource);
        // Statements run one after another reuse one pooled connection, where the temporary table lives.
        await sut.query(
          'test:create',
          'CREATE TEMP TABLE grows (id bigint PRIMARY KEY, state text NOT NULL, n int)',
          [],
        );
        const lookup = `UPDATE grows g SET n = g.n + 1 FROM unnest($1::bigint[]) AS u(id) WHERE g.id = u.id AND g.state = 'open'`;
        for (let i = 0; i < 6; i++) await sut.query('test:lookup', lookup, [[1]]);
        await sut.query(
          'test:fill',
          `INSERT INTO grows SELECT i, 'open', 0 FROM generate_series(1, 50000) AS i`,
          [],
        );
        const plan = await sut.query<{ 'QUERY PLAN': string }>(
          'test:explain',
          `EXPLAIN EXECUTE "test:lookup"('{7}')`,
          [],
        );
        const text = plan.map((row) => row['QUERY PLAN']).join('\n');
        expect(text).toMatch(/Index Scan using \S+ on grows/);
        expect(text).not.toMatch(/Seq Scan on grows/);
      } finally {
        await dataSource.destroy();
      }
    },
  );

  /** A PlainSql on a data source of its own; its pool is ended with it (else ending would wait for ever). */
  async function withOwnConnection(
    check: (context: {
      sut: PlainSql;
      pool: Awaited<ReturnType<typeof hotPathOf>>['pool'];
      dataSource: DataSource;
      backend: () => Promise<number>;
    }) => Promise<void>,
  ): Promise<void> {
    const dataSource = await new DataSource(dataSourceOptions(testDatabaseUrl(), 2)).initialize();
    const { pool } = await hotPathOf(dataSource);
    const sut = new PlainSql(dataSource);
    const backend = async () =>
      (
        await sut.queryOnOwnConnection<{ pid: number }>(
          'test:pid',
          'SELECT pg_backend_pid() AS pid',
          [],
        )
      )[0].pid;
    try {
      await check({ sut, pool, dataSource, backend });
    } finally {
      await dataSource.destroy();
    }
    expect((pool as unknown as { ended: boolean }).ended).toBe(true);
  }

  it('runs a statement group on one connection of its own, given back when the data source closes', () =>
    withOwnConnection(async ({ backend }) => {
      const first = await backend();
      expect(await backend()).toBe(first);
    }));

  // The embedded engine has one session for all: no pool to count, no backend to terminate.
  (embedded ? it.skip : it)(
    'keeps its connection between statements and takes another when that one breaks (PostgreSQL)',
    () =>
      withOwnConnection(async ({ sut, pool, dataSource, backend }) => {
        const first = await backend();
        expect(await backend()).toBe(first);
        // Not given back between statements: the pool counts it as taken.
        expect(pool.totalCount - pool.idleCount).toBe(1);
        // Closed by the server while idle: no unhandled error, and the next statement runs elsewhere.
        await dataSource.query('SELECT pg_terminate_backend($1)', [first]);
        let next: number | undefined;
        for (let attempt = 0; attempt < 50 && next === undefined; attempt++)
          next = await backend().catch(() => undefined);
        expect(next).toBeDefined();
        expect(next).not.toBe(first);
        // A statement that fails closes the connection; the one after it takes another.
        await expect(sut.queryOnOwnConnection('test:fails', 'SELECT 1/0', [])).rejects.toThrow(
          /division by zero/,
        );
        expect(await backend()).not.toBe(next);
      }),
  );
});
