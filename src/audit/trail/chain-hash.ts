import { createHash } from 'node:crypto';
import type { ChainedKind } from './audit-chain.entity.js';

/**
 * The definitions an auditor needs to check the chain without Portico (also in docs/audit-and-webhooks.md):
 * - a row's hash: sha256 (hex) of its canonical JSON, PostgreSQL's `jsonb_strip_nulls(to_jsonb(row))::text`
 *   with the session time zone UTC (keys in jsonb order; columns that are null are left out, so a column
 *   added later does not change the hash of an older row);
 * - a link's hash: sha256 (hex) of `<previous link hash>|<seq>|<kind>|<id>|<row hash>`, the first link's
 *   previous hash being 64 zeros;
 * - a checkpoint's statement: `portico-audit-checkpoint/v1 <seq> <link hash> <signedAt ISO-8601>`,
 *   signed with Ed25519.
 */
export const GENESIS_HASH = '0'.repeat(64);

/** The table and timestamp column of each chained kind. */
export const CHAINED_TABLES: Record<ChainedKind, { table: string; at: string }> = {
  status_change: { table: 'status_changes', at: 'changed_at' },
  access_log: { table: 'access_log', at: 'created_at' },
};

/** SQL for the hash of the row aliased `alias` (run with `SET LOCAL TimeZone = 'UTC'`). */
export function rowHashSql(alias: string): string {
  return `encode(sha256(convert_to(jsonb_strip_nulls(to_jsonb(${alias}))::text, 'UTF8')), 'hex')`;
}

export function linkHash(
  previous: string,
  seq: string | number,
  kind: ChainedKind,
  entryId: string,
  rowHash: string,
): string {
  return createHash('sha256')
    .update(`${previous}|${seq}|${kind}|${entryId}|${rowHash}`)
    .digest('hex');
}

export function checkpointStatement(seq: string, chainHash: string, signedAt: Date): string {
  return `portico-audit-checkpoint/v1 ${seq} ${chainHash} ${signedAt.toISOString()}`;
}

/**
 * SQL: the link's date (`linkAt`) is in the month of the row's (`rowAt`). A link is looked for in its
 * row's month partition only (a probe of one partition, not of every month's), and a row whose date
 * was edited within its month is still the row its link seals (the verifier reports the edit).
 */
export const sameMonthSql = (linkAt: string, rowAt: string) =>
  `${linkAt} >= date_trunc('month', ${rowAt}, 'UTC') AND ${linkAt} < date_trunc('month', ${rowAt}, 'UTC') + interval '1 month'`;
