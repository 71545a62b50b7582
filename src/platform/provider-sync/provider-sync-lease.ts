import type { EntityManager } from 'typeorm';

/** Which rows of a table a part of the sync reads: its kinds, in a status not final, younger than its lifetime. */
export interface PendingRows {
  table: 'provider_resources';
  kinds: readonly string[];
  statuses: readonly string[];
  lifetimeMs: number;
  /**
   * Read only when owed: a row is due only once something marked it (oweRead) and the mark is cleared by
   * a read that succeeds, rather than read on a schedule by its age (a payment after a refund).
   */
  whenOwed?: boolean;
}

/** A row claimed for a read, with the `next_sync_at` its claim wrote (as text: microseconds kept). */
export interface ClaimedRow {
  id: string;
  claimedUntil: string;
}

/** How long a claimed row is one replica's: longer than a batch of reads, each bounded by the read deadline. */
export const SYNC_LEASE_MS = 60_000;
/** The longest pause between two reads of a pending row. */
export const SYNC_MAX_DELAY_MS = 10 * 60_000;

/**
 * Takes up to `limit` pending rows that are due (`next_sync_at` passed; a new row is due one interval
 * after its creation) and moves their `next_sync_at` past the lease in the same statement, so that of N
 * replicas exactly one reads each row; a crashed replica's rows are due again when the lease lapses.
 */
export async function claimDue(
  manager: EntityManager,
  rows: PendingRows,
  intervalMs: number,
  limit: number,
): Promise<ClaimedRow[]> {
  const due = rows.whenOwed
    ? 'next_sync_at IS NOT NULL AND next_sync_at <= now() AND $6::double precision IS NOT NULL'
    : 'coalesce(next_sync_at, created_at + make_interval(secs => $6::double precision / 1000)) <= now()';
  // TypeORM answers an UPDATE … RETURNING with [rows, affected].
  const [claimed]: [{ id: string; claimed_until: string }[], number] = await manager.query(
    `UPDATE ${rows.table} SET next_sync_at = now() + make_interval(secs => $5::double precision / 1000)
      WHERE id IN (
        SELECT id FROM ${rows.table}
         WHERE kind = ANY($1::text[]) AND status = ANY($2::text[])
           AND created_at > now() - make_interval(secs => $3::double precision / 1000)
           AND ${due}
         ORDER BY next_sync_at NULLS FIRST, created_at LIMIT $4
         FOR UPDATE SKIP LOCKED)
      RETURNING id, next_sync_at::text AS claimed_until`,
    [rows.kinds, rows.statuses, rows.lifetimeMs, limit, SYNC_LEASE_MS, intervalMs],
  );
  return claimed.map((row) => ({ id: row.id, claimedUntil: row.claimed_until }));
}

/**
 * Marks a row owed a read (PendingRows.whenOwed) `afterMs` from now, or sooner if it is owed sooner. A
 * mark made while a replica reads the row changes its `next_sync_at`, so that read does not clear it.
 */
export async function oweRead(
  manager: EntityManager,
  table: PendingRows['table'],
  id: string,
  afterMs: number,
): Promise<void> {
  await manager.query(
    `UPDATE ${table}
        SET next_sync_at = least(coalesce(next_sync_at, 'infinity'), now() + make_interval(secs => $2::double precision / 1000))
      WHERE id = $1`,
    [id, afterMs],
  );
}

/** Clears a row's owed read after it succeeded, unless it was owed again meanwhile. */
export async function settleOwed(
  manager: EntityManager,
  table: PendingRows['table'],
  claimed: ClaimedRow,
): Promise<void> {
  await manager.query(
    `UPDATE ${table} SET next_sync_at = NULL WHERE id = $1 AND next_sync_at = $2::timestamptz`,
    [claimed.id, claimed.claimedUntil],
  );
}

/**
 * Sets the row's next read by its age: a tenth of its age, at least the interval and at most
 * SYNC_MAX_DELAY_MS, so that the pause doubles as the row's age doubles (a young row every few seconds).
 */
export async function scheduleNext(
  manager: EntityManager,
  table: PendingRows['table'],
  id: string,
  intervalMs: number,
): Promise<void> {
  await manager.query(
    `UPDATE ${table} SET next_sync_at = now() + make_interval(secs => least(
        greatest($2::double precision, extract(epoch FROM now() - created_at) * 100),
        greatest($2::double precision, $3::double precision)) / 1000)
      WHERE id = $1`,
    [id, intervalMs, SYNC_MAX_DELAY_MS],
  );
}
