import type pg from 'pg';

/**
 * Whether the database behind a `pg` pool is the embedded engine (PGlite behind its socket server): one
 * session for every connection (a statement name prepared by one clashes with the next) and no
 * autovacuum.
 */
export async function isEmbeddedEngine(pool: Pick<pg.Pool, 'query'>): Promise<boolean> {
  const { rows } = await pool.query<{ version: string }>('SELECT version()');
  return /PGlite/i.test(rows[0]?.version ?? '');
}
