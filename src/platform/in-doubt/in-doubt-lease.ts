import type { EntityManager } from 'typeorm';

/**
 * Takes up to `limit` rows of `table` that are in doubt (`creating` past the deadline, or `unknown`)
 * under a lease, so that of N replicas exactly one works each row; a crashed worker's lease lapses.
 */
export async function leaseInDoubt(
  manager: EntityManager,
  table: string,
  olderThanMs: number,
  limit = 20,
  /** provider_resources: only rows of this kind. */
  kind?: string,
): Promise<string[]> {
  // TypeORM answers an UPDATE … RETURNING with [rows, affected].
  const [rows]: [{ id: string }[], number] = await manager.query(
    `UPDATE ${table} SET resolver_lease_until = now() + interval '60 seconds'
      WHERE id IN (
        SELECT id FROM ${table}
         WHERE status IN ('creating', 'unknown')
           AND created_at < now() - make_interval(secs => $1::double precision / 1000)
           AND (resolver_lease_until IS NULL OR resolver_lease_until < now())
           ${kind ? 'AND kind = $3' : ''}
         ORDER BY created_at LIMIT $2
         FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    kind ? [olderThanMs, limit, kind] : [olderThanMs, limit],
  );
  return rows.map((row) => row.id);
}

/** How many rows of `table` are in doubt (as leaseInDoubt picks them, leased or not) and the oldest one's age. */
export async function inDoubtSummary(
  manager: EntityManager,
  table: string,
  olderThanMs: number,
  kind?: string,
): Promise<{ rows: number; oldestSeconds: number }> {
  const [summary]: { rows: string; oldest_seconds: number | null }[] = await manager.query(
    `SELECT count(*) AS rows, extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
       FROM ${table}
      WHERE status IN ('creating', 'unknown')
        AND created_at < now() - make_interval(secs => $1::double precision / 1000)
        ${kind ? 'AND kind = $2' : ''}`,
    kind ? [olderThanMs, kind] : [olderThanMs],
  );
  return { rows: Number(summary!.rows), oldestSeconds: summary!.oldest_seconds ?? 0 };
}
