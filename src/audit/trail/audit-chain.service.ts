import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { sign } from 'node:crypto';
import type { Logger } from 'pino';
import type { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { CHAINED_KINDS, type ChainedKind } from './audit-chain.entity.js';
import { loadAuditSigningKey, type AuditSigningKey } from './audit-signing-key.js';
import {
  CHAINED_TABLES,
  checkpointStatement,
  GENESIS_HASH,
  linkHash,
  rowHashSql,
} from './chain-hash.js';
import { SENT } from './access-log.service.js';

/** One sealer at a time, across every replica on the database. */
export const SEAL_LOCK_KEY = 74_111_002;
/** How far behind the newest rows the sealer's floor stays (see advanceFloor). */
const FLOOR_LAG_MS = 10_000;
/** How long after its call's deadline a row still `sent` waits for the call's outcome to be written. */
export const OUTCOME_SLACK_MS = 5_000;
/** Rows sealed per pass and kind; the next pass takes the rest. */
const BATCH = 2000;

/** Code-point order (the kinds are ASCII; ids are decimal without leading zeros, compared by length first). */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Candidate {
  kind: ChainedKind;
  id: string;
  tenant_id: string;
  row_hash: string;
  at: Date;
}

/**
 * Seals the audit trail into one hash chain: every AUDIT_SEAL_INTERVAL_MS, under a transaction-scoped
 * advisory lock (one sealer across all replicas, so links are numbered without gaps or forks), it takes
 * the status changes and access-log rows not sealed yet, once they are AUDIT_SEAL_GRACE_MS old (an
 * access-log row still `sent` also waits out its call's deadline, so it is sealed with its outcome),
 * hashes each row in the database and appends a link per row. The writers of the trail never wait on
 * it. Every AUDIT_CHECKPOINT_INTERVAL_MS the head is signed into a checkpoint.
 */
@Injectable()
export class AuditChainService implements OnModuleInit {
  private key?: AuditSigningKey | null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    const { sealIntervalMs, checkpointIntervalMs } = this.config.audit;
    // Sealing and signing never overlap in a replica (one group); across replicas the seal's lock rules.
    this.scheduler.register({
      name: 'audit-seal',
      group: 'audit-chain',
      intervalMs: sealIntervalMs,
      run: () => this.seal(false),
    });
    const signed = checkpointIntervalMs > 0 && this.signingKey();
    if (checkpointIntervalMs > 0 && !signed)
      this.logger.warn('AUDIT_SIGNING_KEY is not set: the audit chain is sealed but not signed');
    this.scheduler.register({
      name: 'audit-checkpoint',
      group: 'audit-chain',
      intervalMs: signed ? checkpointIntervalMs : 0,
      run: () => this.checkpoint(),
    });
  }

  /**
   * How long a legitimate row may wait to be sealed: the grace, the read deadline and the outcome's
   * slack, two passes (from its creation, or from its call's own deadline: deadline_at).
   */
  windowMs(): number {
    const { sealGraceMs, sealIntervalMs } = this.config.audit;
    return sealGraceMs + this.readDeadlineMs() + OUTCOME_SLACK_MS + 2 * sealIntervalMs;
  }

  /** The longest deadline a call written ahead may have (a POS payment's). */
  longestDeadlineMs(): number {
    return Math.max(this.readDeadlineMs(), this.config.upstreams.pos.paymentDeadlineMs);
  }

  /** The deadline of a call with none of its own (deadline_at null): the longest of the upstreams'. */
  private readDeadlineMs(): number {
    const { openBanking, card, pos } = this.config.upstreams;
    return Math.max(openBanking.http.deadlineMs, card.http.deadlineMs, pos.http.deadlineMs);
  }

  /** The key checkpoints are signed with, if any. */
  signingKey(): AuditSigningKey | undefined {
    if (this.key === undefined) this.key = loadAuditSigningKey(this.config) ?? null;
    return this.key ?? undefined;
  }

  /**
   * One pass: seals what is due; returns how many links it appended. The periodic pass gives way when
   * another sealer is at work (0); `wait` (an auditor's check, a test) waits for it and then seals.
   */
  async seal(wait = true): Promise<number> {
    let total = 0;
    for (;;) {
      const sealed = await this.dataSource.transaction((manager) => this.sealBatch(manager, wait));
      total += sealed;
      if (sealed < BATCH) return total;
    }
  }

  /** Signs the chain's head; returns its number, or undefined without a key or links. */
  async checkpoint(): Promise<string | undefined> {
    const key = this.signingKey();
    if (!key) return undefined;
    await this.seal();
    const [head] = (await this.dataSource.query(
      'SELECT seq, chain_hash FROM audit_chain ORDER BY seq DESC LIMIT 1',
    )) as { seq: string; chain_hash: string }[];
    if (!head) return undefined;
    const signedAt = new Date();
    const signature = sign(
      null,
      Buffer.from(checkpointStatement(String(head.seq), head.chain_hash, signedAt)),
      key.privateKey,
    ).toString('base64');
    await this.dataSource.query(
      `INSERT INTO audit_checkpoints (seq, chain_hash, signed_at, key_id, signature)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (seq) DO NOTHING`,
      [head.seq, head.chain_hash, signedAt, key.keyId, signature],
    );
    return String(head.seq);
  }

  private async sealBatch(manager: EntityManager, wait: boolean): Promise<number> {
    if (wait) await manager.query('SELECT pg_advisory_xact_lock($1)', [SEAL_LOCK_KEY]);
    else {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        SEAL_LOCK_KEY,
      ])) as { locked: boolean }[];
      if (!locked) return 0;
    }
    await manager.query(`SET LOCAL TimeZone = 'UTC'`);
    const grace = this.config.audit.sealGraceMs;
    const candidates: Candidate[] = [];
    for (const kind of CHAINED_KINDS) {
      const { table, at } = CHAINED_TABLES[kind];
      const floor = await this.floorOf(manager, kind);
      // A row still `sent` waits for its call's deadline (its own, or the read deadline), the time to
      // write the outcome and the grace: sealed earlier, the call's outcome could not be written to it.
      const waitForOutcome =
        kind === 'access_log'
          ? `AND (t.outcome <> '${SENT}'
                  OR coalesce(t.deadline_at, t.created_at + make_interval(secs => $3 / 1000.0))
                     < now() - make_interval(secs => ($2 + ${OUTCOME_SLACK_MS}) / 1000.0))`
          : '';
      // OFFSET 0: a probe of the chain's index per row whatever the statistics (completeSql says why).
      const rows = (await manager.query(
        `SELECT t.id, t.tenant_id, ${rowHashSql('t')} AS row_hash, t.${at} AS at
         FROM ${table} t
         WHERE t.id > $1 AND t.${at} < now() - make_interval(secs => $2 / 1000.0) ${waitForOutcome}
           AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = '${kind}' AND c.entry_id = t.id OFFSET 0)
         ORDER BY t.id LIMIT ${BATCH}`,
        kind === 'access_log' ? [floor, grace, this.readDeadlineMs()] : [floor, grace],
      )) as Omit<Candidate, 'kind'>[];
      candidates.push(...rows.map((row) => ({ ...row, kind, id: String(row.id) })));
    }
    if (candidates.length > 0) {
      // One chain in time order; ties broken by kind and id, so the order is the same for any sealer.
      candidates.sort(
        (a, b) =>
          a.at.getTime() - b.at.getTime() ||
          compareText(a.kind, b.kind) ||
          a.id.length - b.id.length ||
          compareText(a.id, b.id),
      );
      const [head] = (await manager.query(
        'SELECT seq, chain_hash FROM audit_chain ORDER BY seq DESC LIMIT 1',
      )) as { seq: string; chain_hash: string }[];
      let seq = head ? BigInt(head.seq) : 0n;
      let previous = head?.chain_hash ?? GENESIS_HASH;
      const links = candidates.map((row) => {
        seq += 1n;
        previous = linkHash(previous, seq.toString(), row.kind, row.id, row.row_hash);
        return { seq: seq.toString(), ...row, chainHash: previous };
      });
      await manager.query(
        `INSERT INTO audit_chain (seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash)
         SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::bigint[], $4::uuid[], $5::char(64)[], $6::char(64)[])`,
        [
          links.map((l) => l.seq),
          links.map((l) => l.kind),
          links.map((l) => l.id),
          links.map((l) => l.tenant_id),
          links.map((l) => l.row_hash),
          links.map((l) => l.chainHash),
        ],
      );
    }
    for (const kind of CHAINED_KINDS) await this.advanceFloor(manager, kind);
    return candidates.length;
  }

  /** Every row of the kind with an id at or below the floor is sealed (or never existed). */
  private async floorOf(manager: EntityManager, kind: ChainedKind): Promise<string> {
    const [row] = (await manager.query(
      'SELECT floor FROM audit_seal_floors WHERE entry_kind = $1',
      [kind],
    )) as { floor: string }[];
    return row ? String(row.floor) : '0';
  }

  private async advanceFloor(manager: EntityManager, kind: ChainedKind): Promise<void> {
    const { table, at } = CHAINED_TABLES[kind];
    const floor = await this.floorOf(manager, kind);
    // Up to the first row not sealed yet, and never past rows younger than FLOOR_LAG_MS: ids are
    // drawn before commit, so a row with a lower id may still become visible after a higher one.
    const [row] = (await manager.query(
      `SELECT LEAST(
         coalesce(
           (SELECT t.id - 1 FROM ${table} t WHERE t.id > $1
              AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = $2 AND c.entry_id = t.id OFFSET 0)
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
}
