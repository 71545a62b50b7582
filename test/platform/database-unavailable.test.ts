import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { toProblem } from '#src/platform/errors/to-problem.js';

/**
 * A database that cannot serve (refused connection, exhausted pool) is the replica's trouble, not the
 * request's: the app gets 503 with Retry-After, never a bare 500. Errors are the driver's own, from a real
 * connection attempt.
 */
describe('database unavailable', () => {
  const url = process.env.PORTICO_TEST_DATABASE_URL as string;
  const pools: pg.Pool[] = [];
  afterAll(() => Promise.all(pools.map((pool) => pool.end())));
  const failureOf = async (pool: pg.Pool, sql = 'SELECT 1'): Promise<unknown> => {
    pools.push(pool);
    return pool.query(sql).then(
      () => undefined,
      (error: unknown) => error,
    );
  };

  it('answers 503 with Retry-After when the database refuses the connection', async () => {
    const error = await failureOf(new pg.Pool({ host: '127.0.0.1', port: 1, user: 'x' }));
    expect(toProblem(error)).toMatchObject({
      status: 503,
      type: 'urn:portico:problem:unavailable',
      headers: { 'retry-after': '1' },
    });
  });

  it('answers 503 when no pooled connection frees up in time', async () => {
    // The one connection is opened with time to spare (a loaded machine can take more than 100 ms to open
    // it); only the wait for a free slot is given 100 ms, which pg-pool reads from its options at each wait.
    const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
    const held = await pool.connect();
    pool.options.connectionTimeoutMillis = 100;
    const error = await failureOf(pool);
    held.release();
    expect(String((error as Error).message)).toContain('timeout exceeded when trying to connect');
    expect(toProblem(error)).toMatchObject({ status: 503 });
  });

  it('leaves a query the database rejects as an internal error', async () => {
    const error = await failureOf(new pg.Pool({ connectionString: url, max: 1 }), 'SELEC 1');
    expect((error as { code?: string }).code).toBe('42601');
    expect(toProblem(error)).toBeUndefined();
  });
});
