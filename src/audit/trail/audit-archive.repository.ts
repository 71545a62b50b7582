import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { ChainedKind } from './audit-chain.entity.js';
import type { CheckpointRow } from './audit-chain.repository.js';
import { CHAINED_TABLES, sameMonthSql } from './chain-hash.js';

/** A recorded archive (`audit_archives`). */
export interface ArchiveRow {
  month: string;
  file_name: string;
  sha256: string;
  first_seq: string;
  last_seq: string;
  rows: string;
  bytes: string;
  written_at: Date;
  verified_at: Date | null;
}

/** A link with its row's canonical JSON text (null: the row is gone), its times as UTC text. */
export interface ArchivedLinkRow {
  seq: string;
  entry_kind: ChainedKind;
  entry_id: string;
  tenant_id: string;
  row_hash: string;
  chain_hash: string;
  at: string;
  sealed_at: string;
  row: string | null;
}

const utc = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The SQL of the archives of closed months: what a month holds, and `audit_archives`. */
@Injectable()
export class AuditArchiveRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` holding a session-level advisory lock on a connection of its own (undefined when not
   * waiting and another session holds it): a month's archive is written in many short transactions.
   */
  async underLock<T>(key: number, wait: boolean, work: () => Promise<T>): Promise<T | undefined> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      if (wait) await runner.query('SELECT pg_advisory_lock($1)', [key]);
      else {
        const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
          key,
        ])) as { locked: boolean }[];
        if (!locked) return undefined;
      }
      try {
        return await work();
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [key]);
      }
    } finally {
      await runner.release();
    }
  }

  /** The newest link sealing a row dated before `end`, if any. */
  async lastLinkBefore(manager: EntityManager, end: Date): Promise<string | null> {
    const [{ seq }] = (await manager.query(
      'SELECT max(seq)::text AS seq FROM audit_chain WHERE entry_at < $1',
      [end],
    )) as { seq: string | null }[];
    return seq;
  }

  /** The oldest row date the live chain still seals, if any. */
  async oldestLinkedAt(manager: EntityManager): Promise<Date | null> {
    const [{ at }] = (await manager.query('SELECT min(entry_at) AS at FROM audit_chain')) as {
      at: Date | null;
    }[];
    return at;
  }

  /** The first checkpoint at or after link `seq`. */
  async checkpointFrom(manager: EntityManager, seq: string): Promise<CheckpointRow | undefined> {
    const [row] = (await manager.query(
      `SELECT k.seq::text AS seq, k.chain_hash, k.signed_at, k.key_id, k.signature FROM audit_checkpoints k
        WHERE k.seq >= $1 ORDER BY k.seq LIMIT 1`,
      [seq],
    )) as CheckpointRow[];
    return row;
  }

  /** The checkpoints on links first..last. */
  checkpointsIn(manager: EntityManager, first: string, last: string): Promise<CheckpointRow[]> {
    return manager.query(
      `SELECT k.seq::text AS seq, k.chain_hash, k.signed_at, k.key_id, k.signature FROM audit_checkpoints k
        WHERE k.seq BETWEEN $1 AND $2 ORDER BY k.seq`,
      [first, last],
    ) as Promise<CheckpointRow[]>;
  }

  /**
   * A row of the kind dated before `end` and not in the chain, if any: above the sealer's floor only
   * (every row at or below it is sealed), so that the check costs what is still unsealed.
   */
  async unsealedBefore(
    manager: EntityManager,
    kind: ChainedKind,
    end: Date,
  ): Promise<{ id: string; at: Date } | undefined> {
    const { table, at } = CHAINED_TABLES[kind];
    const [row] = (await manager.query(
      `SELECT t.id::text AS id, t.${at} AS at FROM ${table} t
        WHERE t.id > coalesce((SELECT floor FROM audit_seal_floors WHERE entry_kind = $1), 0)
          AND t.${at} < $2
          AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = $1 AND c.entry_id = t.id AND ${sameMonthSql('c.entry_at', `t.${at}`)})
        ORDER BY t.id LIMIT 1`,
      [kind, end],
    )) as { id: string; at: Date }[];
    return row;
  }

  /** Links from `fromSeq` to `toSeq` (at most `limit`), each with its row's canonical JSON text. */
  linksWithRows(
    manager: EntityManager,
    fromSeq: string,
    toSeq: string,
    limit: number,
  ): Promise<ArchivedLinkRow[]> {
    return manager.query(
      `SELECT c.seq::text AS seq, c.entry_kind, c.entry_id::text AS entry_id, c.tenant_id, c.row_hash,
              c.chain_hash, ${utc('c.entry_at')} AS at, ${utc('c.sealed_at')} AS sealed_at,
              CASE c.entry_kind WHEN 'status_change' THEN jsonb_strip_nulls(to_jsonb(s))::text
                                ELSE jsonb_strip_nulls(to_jsonb(a))::text END AS row
         FROM audit_chain c
         LEFT JOIN status_changes s ON c.entry_kind = 'status_change' AND s.id = c.entry_id
         LEFT JOIN access_log a ON c.entry_kind = 'access_log' AND a.id = c.entry_id AND a.created_at = c.entry_at
        WHERE c.seq BETWEEN $1 AND $2 ORDER BY c.seq LIMIT ${limit}`,
      [fromSeq, toSeq],
    ) as Promise<ArchivedLinkRow[]>;
  }

  /** The chain hash of link `seq` if the live chain still holds it. */
  async linkHashAt(manager: EntityManager, seq: string): Promise<string | undefined> {
    const [row] = (await manager.query('SELECT chain_hash FROM audit_chain WHERE seq = $1', [
      seq,
    ])) as { chain_hash: string }[];
    return row?.chain_hash;
  }

  async archives(manager: EntityManager = this.dataSource.manager): Promise<ArchiveRow[]> {
    return (await manager.query(
      `SELECT month, file_name, sha256, first_seq::text AS first_seq, last_seq::text AS last_seq,
              rows::text AS rows, bytes::text AS bytes, written_at, verified_at
         FROM audit_archives ORDER BY month`,
    )) as ArchiveRow[];
  }

  async archiveOf(
    month: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ArchiveRow | undefined> {
    return (await this.archives(manager)).find((row) => row.month === month);
  }

  /** Records an archive written and read back (a month recorded already keeps its row). */
  async record(row: Omit<ArchiveRow, 'written_at' | 'verified_at'>): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO audit_archives (month, file_name, sha256, first_seq, last_seq, rows, bytes, written_at, verified_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now()) ON CONFLICT (month) DO NOTHING`,
      [row.month, row.file_name, row.sha256, row.first_seq, row.last_seq, row.rows, row.bytes],
    );
  }

  async markVerified(manager: EntityManager, month: string): Promise<void> {
    await manager.query('UPDATE audit_archives SET verified_at = now() WHERE month = $1', [month]);
  }

  /** The month (`YYYY-MM`) of the archive recorded as holding link `seq`, if any. */
  async monthHolding(
    seq: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<string | undefined> {
    const [row] = (await manager.query(
      'SELECT month FROM audit_archives WHERE $1::bigint BETWEEN first_seq AND last_seq',
      [seq],
    )) as { month: string }[];
    return row?.month;
  }

  /** Rows in each table's default partition (the one no month holds). */
  async defaultPartitionRows(): Promise<{ table: string; rows: number }[]> {
    return Promise.all(
      ['access_log', 'audit_chain'].map(async (table) => {
        const [row] = (await this.dataSource.query(
          `SELECT count(*)::int AS rows FROM "${table}_default"`,
        )) as { rows: number }[];
        return { table, rows: row?.rows ?? 0 };
      }),
    );
  }

  /** When the newest archive was written, and its month. */
  async lastArchive(): Promise<{ month: string; at: Date } | undefined> {
    const [row] = (await this.dataSource.query(
      'SELECT month, written_at AS at FROM audit_archives ORDER BY written_at DESC, month DESC LIMIT 1',
    )) as { month: string; at: Date }[];
    return row;
  }
}
