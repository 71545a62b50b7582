import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/**
 * A table holding sealed secrets, declared by the module that owns it: its columns of sealed values
 * and what each value is bound to (the seal's context).
 */
export interface SealedTable {
  table: string;
  /** Its primary key column. */
  idColumn: string;
  /** Columns holding a sealed value, or null. */
  columns: string[];
  /** What the value in `column` of row `id` is bound to (the context it was sealed with). */
  context(id: string, column: string): string;
  /** A stored value that is the secret itself (written before secrets were sealed): the job seals it. */
  plain?(stored: string): boolean;
}

/** Values per key id; '' counts the values that are not sealed (kept as they were written). */
export type ValuesByKey = Map<string, number>;

/** What one batch of the re-seal did. */
export interface ResealBatch {
  /** The last row looked at (the next batch starts after it), null when none was left. */
  lastId: string | null;
  rows: number;
  /** Values sealed anew with the current key. */
  resealed: number;
  /** Values no configured key opens, left as they are. */
  unopened: number;
}

/** The SQL of the re-seal over the declared tables (names are the code's own, never input). */
@Injectable()
export class SealedValuesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async countByKey(table: SealedTable): Promise<ValuesByKey> {
    const parts = table.columns.map(
      (column) =>
        `SELECT CASE WHEN ${column} LIKE 'v1:%' THEN split_part(${column}, ':', 2) ELSE '' END AS key_id FROM ${table.table} WHERE ${column} IS NOT NULL`,
    );
    const rows = (await this.dataSource.query(
      `SELECT key_id, count(*)::int AS n FROM (${parts.join(' UNION ALL ')}) v GROUP BY key_id`,
    )) as { key_id: string; n: number }[];
    return new Map(rows.map((row) => [row.key_id, Number(row.n)]));
  }

  /**
   * Seals anew, in one transaction, up to `limit` rows after `afterId` (in key order) holding a value
   * not sealed with `currentKeyId`. The rows are locked and those another replica holds skipped, so
   * that replicas re-sealing at once never write one row twice and a row written meanwhile (new keys
   * set by an operator) waits for the batch, then replaces what it wrote.
   */
  resealBatch(
    table: SealedTable,
    currentKeyId: string,
    afterId: string | null,
    limit: number,
    reseal: (id: string, column: string, stored: string) => string | undefined,
  ): Promise<ResealBatch> {
    const outdated = table.columns
      .map((column) => `(${column} IS NOT NULL AND ${column} NOT LIKE $1)`)
      .join(' OR ');
    const after = afterId === null ? '' : `AND ${table.idColumn} > $3`;
    return this.dataSource.transaction(async (manager) => {
      const rows = (await manager.query(
        `SELECT ${table.idColumn}::text AS id, ${table.columns.join(', ')} FROM ${table.table}
          WHERE (${outdated}) ${after}
          ORDER BY ${table.idColumn} LIMIT $2 FOR UPDATE SKIP LOCKED`,
        afterId === null
          ? [`v1:${currentKeyId}:%`, limit]
          : [`v1:${currentKeyId}:%`, limit, afterId],
      )) as Record<string, string | null>[];
      let resealed = 0;
      let unopened = 0;
      for (const row of rows) {
        const id = row.id as string;
        const changes: [string, string][] = [];
        for (const column of table.columns) {
          const stored = row[column];
          if (stored === null || stored.startsWith(`v1:${currentKeyId}:`)) continue;
          const value = reseal(id, column, stored);
          if (value === undefined) unopened++;
          else changes.push([column, value]);
        }
        if (changes.length === 0) continue;
        await manager.query(
          `UPDATE ${table.table} SET ${changes.map(([column], i) => `${column} = $${i + 2}`).join(', ')} WHERE ${table.idColumn} = $1`,
          [id, ...changes.map(([, value]) => value)],
        );
        resealed += changes.length;
      }
      return {
        lastId: rows.length > 0 ? (rows[rows.length - 1].id as string) : null,
        rows: rows.length,
        resealed,
        unopened,
      };
    });
  }
}
