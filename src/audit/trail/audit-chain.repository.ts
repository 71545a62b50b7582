import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { ChainedKind } from './audit-chain.entity.js';
import { CHAINED_TABLES, rowHashSql, sameMonthSql } from './chain-hash.js';
import { SENT } from './access-log.service.js';
import { WRITER_ID, WRITER_LEASE_MS, writerMayHoldSql } from './writer-lease.js';

/** One sealer at a time, across every replica on the database. */
export const SEAL_LOCK_KEY = 74_111_002;
/** One replica at a time claims the scheduled verification. */
const VERIFY_LOCK_KEY = 74_111_011;
/** How long after its call's deadline a row still `sent` waits for the call's outcome to be written. */
export const OUTCOME_SLACK_MS = 5_000;
/** How far behind the newest rows the sealer's floor stays (see advanceFloor). */
const FLOOR_LAG_MS = 10_000;

/** A row of the trail not sealed yet, with its hash (computed in the database) and when it became sealable. */
export interface UnsealedRow {
  id: string;
  tenant_id: string;
  row_hash: string;
  at: Date;
  /** The row's date (its partition's key, and its link's), as text: a Date would lose its microseconds. */
  entry_at: string;
}

/** A link to append: its number, the row it seals and the chain's hash up to it. */
export interface NewLink {
  seq: string;
  kind: ChainedKind;
  id: string;
  tenant_id: string;
  row_hash: string;
  entry_at: string;
  chainHash: string;
}

export interface ChainHead {
  seq: string;
  chain_hash: string;
}

export interface CheckpointRow {
  seq: string;
  chain_hash: string;
  signed_at: Date;
  key_id: string;
  signature: string;
}

export interface RetentionCutRow {
  seq: string;
  chain_hash: string;
  removed_before: Date;
  cut_at: Date;
}

/** A link with the current hash of the row it seals (null: the row is gone) and when that row became sealable. */
export interface LinkWithRow {
  seq: string;
  entry_kind: ChainedKind;
  entry_id: string;
  row_hash: string;
  chain_hash: string;
  sealed_at: Date;
  current_hash: string | null;
  at: Date | null;
}

/** The newest checkpoint a verification passed: where the next one starts. */
export interface VerifiedCheckpoint {
  checkpoint_seq: string;
  checkpoint_hash: string;
}

/** How a verification ended, as recorded. */
export interface VerificationRecord {
  ok: boolean;
  full: boolean;
  fromSeq: string | null;
  links: number;
  head: { seq: string; chainHash: string } | null;
  checkpoint: { seq: string; chainHash: string } | null;
  problem: string | null;
}

/** The sealer's timing, in milliseconds, on which the moment a row becomes sealable depends. */
export interface SealTiming {
  /** AUDIT_SEAL_GRACE_MS. */
  graceMs: number;
  /** The deadline of a call with none of its own (deadline_at null). */
  readDeadlineMs: number;
  /** The longest deadline any call has (a POS payment's): no row may claim a later one. */
  longestDeadlineMs: number;
}

const interval = (ms: string) => `make_interval(secs => ${ms} / 1000.0)`;

/**
 * SQL for the moment the row aliased `alias` of the kind became sealable, from three parameters
 * (`grace`, `read`, `longest`: SealTiming's, in ms). A status change: its time plus the grace. An
 * access-log row: its creation plus the grace, and no sooner than its outcome (completed_at) or, still
 * `sent`, than its call's deadline plus the time to write the outcome and the grace. The deadline is
 * capped at the longest any call has, so that a row inserted after the fact cannot claim a far one.
 * The sealer seals rows in this order and the verifier dates rows by it (see AuditVerifierService).
 */
export function sealableAtSql(
  kind: ChainedKind,
  alias: string,
  [grace, read, longest]: [string, string, string],
): string {
  const { at } = CHAINED_TABLES[kind];
  if (kind === 'status_change') return `(${alias}.${at} + ${interval(grace)})`;
  const deadline = `least(coalesce(${alias}.deadline_at, ${alias}.created_at + ${interval(read)}), ${alias}.created_at + ${interval(longest)})`;
  // least/greatest skip nulls: a row still `sent` has only its deadline.
  return `greatest(${alias}.created_at + ${interval(grace)},
            least(CASE WHEN ${alias}.outcome <> '${SENT}' THEN coalesce(${alias}.completed_at, ${alias}.created_at) END,
                  ${deadline} + ${interval(`(${grace} + ${OUTCOME_SLACK_MS})`)}))`;
}

/** The parameters sealableAtSql reads for the kind (a status change only the grace). */
const timingParams = (kind: ChainedKind, timing: SealTiming) =>
  kind === 'status_change'
    ? [timing.graceMs]
    : [timing.graceMs, timing.readDeadlineMs, timing.longestDeadlineMs];

/**
 * The SQL of the audit chain (tables `audit_chain`, `audit_checkpoints`, `audit_seal_floors`,
 * `audit_retention_cuts`, and the chained rows of `status_changes` and `access_log` as the sealer,
 * the verifier and retention read or remove them). The `manager` methods run in the caller's transaction.
 */
@Injectable()
export class AuditChainRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * Runs `work` in a REPEATABLE READ transaction (one snapshot of the whole chain) with the session
   * time zone UTC (row hashes depend on it).
   */
  async readSnapshot<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      await runner.query(`SET LOCAL TimeZone = 'UTC'`);
      const result = await work(runner.manager);
      await runner.commitTransaction();
      return result;
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  }

  /** Takes the sealer's lock for the transaction: waits for it, or (not `wait`) answers false when it is held. */
  async lockSealer(manager: EntityManager, wait: boolean): Promise<boolean> {
    if (wait) {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [SEAL_LOCK_KEY]);
      return true;
    }
    const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
      SEAL_LOCK_KEY,
    ])) as { locked: boolean }[];
    return locked;
  }

  /** Row hashes depend on the session time zone: UTC for the rest of the transaction. */
  async hashInUtc(manager: EntityManager): Promise<void> {
    await manager.query(`SET LOCAL TimeZone = 'UTC'`);
  }

  /**
   * Up to `limit` rows of the kind above `floor` not sealed yet whose sealable moment (sealableAtSql)
   * has passed, in the order of that moment (then id), each with its hash and that moment (`at`). A row
   * of the access log still `sent` waits for its call's deadline: sealed earlier, the call's outcome
   * could not be written to it; and for its writer's lease to lapse.
   */
  async unsealed(
    manager: EntityManager,
    kind: ChainedKind,
    floor: string,
    timing: SealTiming,
    limit: number,
  ): Promise<UnsealedRow[]> {
    const { table, at } = CHAINED_TABLES[kind];
    const sealableAt = sealableAtSql(kind, 't', ['$2::int', '$3::int', '$4::int']);
    // …and while its writer lives, for that writer may still hold the outcome (WriterLeaseService).
    const waitForWriter =
      kind === 'access_log'
        ? `AND NOT (t.outcome = '${SENT}' AND ${writerMayHoldSql('t', '$5')})`
        : '';
    // OFFSET 0: a probe of the chain's index per row whatever the statistics (completeSql says why).
    // Hashed only once chosen: the due rows are sorted by their moment, not read in id order.
    const rows = (await manager.query(
      `WITH due AS (
         SELECT t.id, t.${at} AS entry_at, ${sealableAt} AS at
           FROM ${table} t
          WHERE t.id > $1 AND ${sealableAt} < now() ${waitForWriter}
            AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = '${kind}' AND c.entry_id = t.id AND ${sameMonthSql('c.entry_at', `t.${at}`)} OFFSET 0)
          ORDER BY at, t.id LIMIT ${limit})
       SELECT t.id, t.tenant_id, ${rowHashSql('t')} AS row_hash, due.at, t.${at}::text AS entry_at
         FROM due JOIN ${table} t ON t.id = due.id AND t.${at} = due.entry_at
        ORDER BY due.at, due.id`,
      kind === 'access_log'
        ? [floor, ...timingParams(kind, timing), WRITER_ID]
        : [floor, ...timingParams(kind, timing)],
    )) as UnsealedRow[];
    return rows.map((row) => ({ ...row, id: String(row.id) }));
  }

  /** The chain's last link, if any. */
  async head(manager: EntityManager = this.dataSource.manager): Promise<ChainHead | undefined> {
    const [head] = (await manager.query(
      'SELECT seq, chain_hash FROM audit_chain ORDER BY seq DESC LIMIT 1',
    )) as ChainHead[];
    return head;
  }

  async append(manager: EntityManager, links: NewLink[]): Promise<void> {
    await manager.query(
      `INSERT INTO audit_chain (seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash, entry_at)
         SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::bigint[], $4::uuid[], $5::char(64)[], $6::char(64)[], $7::timestamptz[])`,
      [
        links.map((l) => l.seq),
        links.map((l) => l.kind),
        links.map((l) => l.id),
        links.map((l) => l.tenant_id),
        links.map((l) => l.row_hash),
        links.map((l) => l.chainHash),
        links.map((l) => l.entry_at),
      ],
    );
  }

  /** Every row of the kind with an id at or below the floor is sealed (or never existed). */
  async floorOf(manager: EntityManager, kind: ChainedKind): Promise<string> {
    const [row] = (await manager.query(
      'SELECT floor FROM audit_seal_floors WHERE entry_kind = $1',
      [kind],
    )) as { floor: string }[];
    return row ? String(row.floor) : '0';
  }

  async advanceFloor(manager: EntityManager, kind: ChainedKind): Promise<void> {
    const { table, at } = CHAINED_TABLES[kind];
    const floor = await this.floorOf(manager, kind);
    // Up to the first row not sealed yet, and never past rows younger than FLOOR_LAG_MS: ids are
    // drawn before commit, so a row with a lower id may still become visible after a higher one.
    const [row] = (await manager.query(
      `SELECT LEAST(
         coalesce(
           (SELECT t.id - 1 FROM ${table} t WHERE t.id > $1
              AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = $2 AND c.entry_id = t.id AND ${sameMonthSql('c.entry_at', `t.${at}`)} OFFSET 0)
            ORDER BY t.id LIMIT 1),
           (SELECT max(c.entry_id) FROM audit_chain c WHERE c.entry_kind = $2),
           $1),
         coalesce(
           (SELECT max(t.id) FROM ${table} t
            WHERE t.id > $1 AND t.${at} < now() - make_interval(secs => $3 / 1000.0)),
           $1)) AS floor`,
      [floor, kind, FLOOR_LAG_MS],
    )) as { floor: string }[];
    await manager.query(
      `INSERT INTO audit_seal_floors (entry_kind, floor) VALUES ($1, $2)
       ON CONFLICT (entry_kind) DO UPDATE SET floor = GREATEST(audit_seal_floors.floor, EXCLUDED.floor)`,
      [kind, row.floor],
    );
  }

  /** Records a signed checkpoint (once per link). */
  async insertCheckpoint(
    checkpoint: Omit<CheckpointRow, 'signed_at'> & { signed_at: Date },
  ): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO audit_checkpoints (seq, chain_hash, signed_at, key_id, signature)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (seq) DO NOTHING`,
      [
        checkpoint.seq,
        checkpoint.chain_hash,
        checkpoint.signed_at,
        checkpoint.key_id,
        checkpoint.signature,
      ],
    );
  }

  checkpoints(manager: EntityManager): Promise<CheckpointRow[]> {
    return manager.query(
      'SELECT seq, chain_hash, signed_at, key_id, signature FROM audit_checkpoints ORDER BY seq',
    ) as Promise<CheckpointRow[]>;
  }

  /** The last retention cut, if any. */
  async latestCut(manager: EntityManager): Promise<RetentionCutRow | undefined> {
    const [cut] = (await manager.query(
      'SELECT seq, chain_hash, removed_before, cut_at FROM audit_retention_cuts ORDER BY seq DESC LIMIT 1',
    )) as RetentionCutRow[];
    return cut;
  }

  /**
   * Up to `limit` links from `fromSeq`, each with the current hash of the row it seals and the moment
   * that row became sealable (sealableAtSql).
   */
  linksFrom(
    manager: EntityManager,
    fromSeq: string,
    timing: SealTiming,
    limit: number,
  ): Promise<LinkWithRow[]> {
    const params = ['$2::int', '$3::int', '$4::int'] as [string, string, string];
    return manager.query(
      `SELECT c.seq, c.entry_kind, c.entry_id, c.row_hash, c.chain_hash, c.sealed_at,
                  CASE c.entry_kind WHEN 'status_change' THEN ${rowHashSql('s')} ELSE ${rowHashSql('a')} END AS current_hash,
                  coalesce(${sealableAtSql('status_change', 's', params)}, ${sealableAtSql('access_log', 'a', params)}) AS at
           FROM audit_chain c
           LEFT JOIN status_changes s ON c.entry_kind = 'status_change' AND s.id = c.entry_id
           LEFT JOIN access_log a ON c.entry_kind = 'access_log' AND a.id = c.entry_id AND a.created_at = c.entry_at
           WHERE c.seq >= $1 ORDER BY c.seq LIMIT ${limit}`,
      [fromSeq, timing.graceMs, timing.readDeadlineMs, timing.longestDeadlineMs],
    ) as Promise<LinkWithRow[]>;
  }

  /**
   * The current hash of the row of the kind with this id, whatever its date (a row whose date was
   * changed is no longer where its link looks for it); null when there is none.
   */
  async currentHashById(
    manager: EntityManager,
    kind: ChainedKind,
    id: string,
  ): Promise<string | null> {
    const { table } = CHAINED_TABLES[kind];
    const [row] = (await manager.query(
      `SELECT ${rowHashSql('t')} AS hash FROM ${table} t WHERE t.id = $1 LIMIT 1`,
      [id],
    )) as { hash: string }[];
    return row?.hash ?? null;
  }

  /** The first row of the kind sealable for more than `windowMs` and not in the chain, if any. */
  async firstUnsealed(
    manager: EntityManager,
    kind: ChainedKind,
    windowMs: number,
    timing: SealTiming,
    aboveFloor = false,
  ): Promise<{ id: string; at: Date } | undefined> {
    const { table, at } = CHAINED_TABLES[kind];
    // Above the sealer's floor only (an incremental verification): a row the sealer skipped keeps the
    // floor below it; one slipped in below the floor afterwards is for the full walk to find.
    const above = aboveFloor
      ? `AND t.id > coalesce((SELECT floor FROM audit_seal_floors WHERE entry_kind = '${kind}'), 0)`
      : '';
    // A `sent` row whose writer lives, or died lately, is waiting for it legitimately (see unsealed).
    const waiting =
      kind === 'access_log'
        ? `AND NOT (t.outcome = '${SENT}' AND EXISTS (SELECT 1 FROM writer_leases l WHERE l.writer = t.writer
                      AND l.expires_at >= now() - make_interval(secs => ${(2 * WRITER_LEASE_MS) / 1000})))`
        : '';
    const [row] = (await manager.query(
      `SELECT t.id, t.${at} AS at FROM ${table} t
         WHERE ${sealableAtSql(kind, 't', ['$2::int', '$3::int', '$4::int'])} < now() - ${interval('$1::int')} ${waiting} ${above}
           AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = '${kind}' AND c.entry_id = t.id AND ${sameMonthSql('c.entry_at', `t.${at}`)})
         ORDER BY t.id LIMIT 1`,
      [windowMs, ...timingParams(kind, timing)],
    )) as { id: string; at: Date }[];
    return row;
  }

  /**
   * Removes the links up to `seq` and the rows they seal; returns how many rows went. `apart`: a month
   * whose access-log rows and links are left to the caller (its partitions are dropped whole).
   */
  async removeThrough(
    manager: EntityManager,
    seq: string,
    apart?: { start: Date; end: Date },
  ): Promise<number> {
    await manager.query(`SET LOCAL portico.retention = 'on'`);
    const outside = apart ? 'AND (c.entry_at < $2 OR c.entry_at >= $3)' : '';
    const params = apart ? [seq, apart.start, apart.end] : [seq];
    let rowsRemoved = 0;
    for (const kind of Object.keys(CHAINED_TABLES) as ChainedKind[]) {
      const { table, at } = CHAINED_TABLES[kind];
      const [, removed] = (await manager.query(
        `DELETE FROM ${table} t USING audit_chain c
           WHERE c.entry_kind = '${kind}' AND c.entry_id = t.id AND ${sameMonthSql('c.entry_at', `t.${at}`)} AND c.seq <= $1
             ${kind === 'access_log' ? outside : ''}`,
        kind === 'access_log' ? params : [seq],
      )) as [unknown, number];
      rowsRemoved += removed;
    }
    await manager.query(`DELETE FROM audit_chain c WHERE c.seq <= $1 ${outside}`, params);
    return rowsRemoved;
  }

  async recordCut(
    manager: EntityManager,
    cut: { seq: string; chainHash: string; removedBefore: Date; rowsRemoved: number },
  ): Promise<void> {
    await manager.query(
      `INSERT INTO audit_retention_cuts (seq, chain_hash, removed_before, cut_at, rows_removed)
         VALUES ($1, $2, $3, now(), $4)`,
      [cut.seq, cut.chainHash, cut.removedBefore, cut.rowsRemoved],
    );
  }

  /**
   * For the metrics: per kind, the rows above the floor not in the chain yet (waiting for their grace,
   * their call's outcome, or a sealer that is behind) and the oldest one's age.
   */
  async sealBacklog(): Promise<{ kind: ChainedKind; rows: number; oldestSeconds: number }[]> {
    const kinds = Object.keys(CHAINED_TABLES) as ChainedKind[];
    return Promise.all(
      kinds.map(async (kind) => {
        const { table, at } = CHAINED_TABLES[kind];
        const [row] = (await this.dataSource.query(
          `SELECT count(*) AS rows, extract(epoch FROM now() - min(t.${at}))::float8 AS oldest_seconds
             FROM ${table} t
            WHERE t.id > coalesce((SELECT floor FROM audit_seal_floors WHERE entry_kind = $1), 0)
              AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = $1 AND c.entry_id = t.id AND ${sameMonthSql('c.entry_at', `t.${at}`)})`,
          [kind],
        )) as { rows: string; oldest_seconds: number | null }[];
        return { kind, rows: Number(row!.rows), oldestSeconds: row!.oldest_seconds ?? 0 };
      }),
    );
  }

  /** When the newest checkpoint was signed, if any. */
  async lastCheckpointAt(): Promise<Date | undefined> {
    const [row] = (await this.dataSource.query(
      'SELECT max(signed_at) AS at FROM audit_checkpoints',
    )) as { at: Date | null }[];
    return row?.at ?? undefined;
  }

  /** The newest checkpoint an ok verification verified, if any. */
  async lastVerifiedCheckpoint(manager: EntityManager): Promise<VerifiedCheckpoint | undefined> {
    const [row] = (await manager.query(
      `SELECT checkpoint_seq, checkpoint_hash FROM audit_verifications
        WHERE ok AND checkpoint_seq IS NOT NULL ORDER BY checkpoint_seq DESC LIMIT 1`,
    )) as VerifiedCheckpoint[];
    return row;
  }

  /** Records a verification as it starts; returns its id. */
  async startVerification(trigger: string, full: boolean): Promise<string> {
    const [row] = (await this.dataSource.query(
      `INSERT INTO audit_verifications (trigger, "full") VALUES ($1, $2) RETURNING id`,
      [trigger, full],
    )) as { id: string }[];
    return String(row.id);
  }

  /**
   * Claims the scheduled verification for this replica: its row, unless another replica holds the claim
   * now or a scheduled verification started within `withinMs` (undefined).
   */
  claimScheduledVerification(withinMs: number): Promise<string | undefined> {
    return this.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        VERIFY_LOCK_KEY,
      ])) as { locked: boolean }[];
      if (!locked) return undefined;
      const [row] = (await manager.query(
        `INSERT INTO audit_verifications (trigger, "full")
           SELECT 'scheduled', false WHERE NOT EXISTS (
             SELECT 1 FROM audit_verifications WHERE trigger = 'scheduled'
                AND started_at > now() - make_interval(secs => $1::double precision / 1000))
         RETURNING id`,
        [withinMs],
      )) as { id: string }[];
      return row ? String(row.id) : undefined;
    });
  }

  async finishVerification(id: string, record: VerificationRecord): Promise<void> {
    await this.dataSource.query(
      `UPDATE audit_verifications SET finished_at = now(), ok = $2, "full" = $3, from_seq = $4,
              links = $5, head_seq = $6, head_hash = $7, checkpoint_seq = $8, checkpoint_hash = $9,
              problem = $10
        WHERE id = $1`,
      [
        id,
        record.ok,
        record.full,
        record.fromSeq,
        record.links,
        record.head?.seq ?? null,
        record.head?.chainHash ?? null,
        record.checkpoint?.seq ?? null,
        record.checkpoint?.chainHash ?? null,
        record.problem,
      ],
    );
  }

  /** For the metrics: when the newest finished verification finished, and whether it passed. */
  async lastVerification(): Promise<{ at: Date; ok: boolean } | undefined> {
    const [row] = (await this.dataSource.query(
      `SELECT finished_at AS at, ok FROM audit_verifications
        WHERE finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT 1`,
    )) as { at: Date; ok: boolean }[];
    return row;
  }
}
