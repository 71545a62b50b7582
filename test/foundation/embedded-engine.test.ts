import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from '#src/platform/database/embedded/embedded-postgres.js';

describe('the embedded engine (PGlite behind a socket) under concurrent clients', () => {
  let engine: EmbeddedPostgres;
  let pools: pg.Pool[];
  beforeAll(async () => {
    engine = await startEmbeddedPostgres('memory://');
    pools = [
      new pg.Pool({ connectionString: engine.url, max: 4 }),
      new pg.Pool({ connectionString: engine.url, max: 4 }),
    ];
    await pools[0].query('CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)');
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await engine.stop();
  });

  it('keeps every parameterised query whole: each answer belongs to its own query', async () => {
    const results = await Promise.all(
      // Each query has its own text, so that a Bind meeting another connection's statement shows.
      Array.from({ length: 200 }, (_, i) =>
        pools[i % 2].query<{ n: number; label: string; k: number }>(
          `SELECT $1::int AS n, $2::text AS label, ${i} AS k`,
          [i, `q${i}`],
        ),
      ),
    );
    results.forEach((result, i) => expect(result.rows).toEqual([{ n: i, label: `q${i}`, k: i }]));
  });

  it('keeps transactions of different connections apart', async () => {
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const client = await pools[i % 2].connect();
        try {
          await client.query('BEGIN');
          await client.query('INSERT INTO counters (id, n) VALUES ($1, $2)', [i, i * 10]);
          const { rows } = await client.query<{ n: number }>(
            'SELECT n FROM counters WHERE id = $1',
            [i],
          );
          expect(rows).toEqual([{ n: i * 10 }]);
          await client.query(i % 3 === 0 ? 'ROLLBACK' : 'COMMIT');
        } finally {
          client.release();
        }
      }),
    );
    const { rows } = await pools[0].query<{ count: string }>('SELECT count(*) FROM counters');
    expect(Number(rows[0].count)).toBe(20 - 7);
  });
});
