import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { sign } from 'node:crypto';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { CHAINED_KINDS, type ChainedKind } from './audit-chain.entity.js';
import {
  loadAuditSigningKey,
  loadTrustedAuditKeys,
  type AuditPublicKey,
  type AuditSigningKey,
} from './audit-signing-key.js';
import {
  AuditChainRepository,
  type SealTiming,
  type UnsealedRow,
} from './audit-chain.repository.js';
import { checkpointStatement, GENESIS_HASH, linkHash } from './chain-hash.js';

/** Rows sealed per pass and kind; the next pass takes the rest. */
const BATCH = 2000;

/** Code-point order (the kinds are ASCII; ids are decimal without leading zeros, compared by length first). */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Candidate extends UnsealedRow {
  kind: ChainedKind;
}

/**
 * Seals the audit trail into one hash chain: every AUDIT_SEAL_INTERVAL_MS, under a transaction-scoped
 * advisory lock (one sealer across all replicas, so links are numbered without gaps or forks), it takes
 * the status changes and access-log rows not sealed yet, once they are AUDIT_SEAL_GRACE_MS old (an
 * access-log row still `sent` also waits out its call's deadline, so it is sealed with its outcome),
 * hashes each row in the database and appends a link per row, in the order the rows became sealable. The writers of the trail never wait on
 * it. Every AUDIT_CHECKPOINT_INTERVAL_MS the head is signed into a checkpoint.
 */
@Injectable()
export class AuditChainService implements OnModuleInit {
  private key?: AuditSigningKey | null;
  private trusted?: Map<string, AuditPublicKey>;

  constructor(
    private readonly links: AuditChainRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    const { sealIntervalMs, checkpointIntervalMs } = this.config.audit;
    // A trusted-keys file that cannot be read stops the start, naming the variable.
    if (this.config.audit.trustedKeysFile) this.trustedKeys();
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

  /** What the moment a row becomes sealable depends on (see sealableAtSql). */
  timing(): SealTiming {
    const { openBanking, card, pos } = this.config.upstreams;
    const readDeadlineMs = Math.max(
      openBanking.http.deadlineMs,
      card.http.deadlineMs,
      pos.http.deadlineMs,
    );
    return {
      graceMs: this.config.audit.sealGraceMs,
      readDeadlineMs,
      longestDeadlineMs: Math.max(readDeadlineMs, pos.paymentDeadlineMs),
    };
  }

  /**
   * How long after it became sealable a legitimate row may still be sealed: two passes, and a minute
   * for the transaction that wrote it to commit (rows are dated by the database clock at its start).
   */
  lagMs(): number {
    return 2 * this.config.audit.sealIntervalMs + 60_000;
  }

  /** The key checkpoints are signed with, if any. */
  signingKey(): AuditSigningKey | undefined {
    if (this.key === undefined) this.key = loadAuditSigningKey(this.config) ?? null;
    return this.key ?? undefined;
  }

  /** The keys checkpoints are verified with, by key id: the signing key and the retired ones trusted. */
  trustedKeys(): Map<string, AuditPublicKey> {
    this.trusted ??= loadTrustedAuditKeys(this.config, this.signingKey());
    return this.trusted;
  }

  /**
   * One pass: seals what is due; returns how many links it appended. The periodic pass gives way when
   * another sealer is at work (0); `wait` (an auditor's check, a test) waits for it and then seals.
   */
  async seal(wait = true): Promise<number> {
    let total = 0;
    for (;;) {
      const sealed = await this.links.transaction((manager) => this.sealBatch(manager, wait));
      total += sealed;
      if (sealed < BATCH) return total;
    }
  }

  /** Signs the chain's head; returns its number, or undefined without a key or links. */
  async checkpoint(): Promise<string | undefined> {
    const key = this.signingKey();
    if (!key) return undefined;
    await this.seal();
    const head = await this.links.head();
    if (!head) return undefined;
    const signedAt = new Date();
    const signature = sign(
      null,
      Buffer.from(checkpointStatement(String(head.seq), head.chain_hash, signedAt)),
      key.privateKey,
    ).toString('base64');
    await this.links.insertCheckpoint({
      seq: head.seq,
      chain_hash: head.chain_hash,
      signed_at: signedAt,
      key_id: key.keyId,
      signature,
    });
    return String(head.seq);
  }

  private async sealBatch(manager: EntityManager, wait: boolean): Promise<number> {
    if (!(await this.links.lockSealer(manager, wait))) return 0;
    await this.links.hashInUtc(manager);
    const timing = this.timing();
    let candidates: Candidate[] = [];
    let cut: Candidate | undefined;
    for (const kind of CHAINED_KINDS) {
      const floor = await this.links.floorOf(manager, kind);
      const rows = await this.links.unsealed(manager, kind, floor, timing, BATCH);
      const kindRows = rows.map((row) => ({ ...row, kind }));
      candidates.push(...kindRows);
      // A full batch may leave rows of its kind that became sealable after its last: nothing of
      // another kind later than that is sealed in this pass, so the chain stays in that order.
      const last = kindRows.at(-1);
      if (rows.length === BATCH && last && (!cut || byMoment(last, cut) < 0)) cut = last;
    }
    // One chain in the order rows became sealable (the verifier relies on it); ties broken by kind and
    // id, so the order is the same for any sealer.
    candidates.sort(byMoment);
    if (cut) candidates = candidates.filter((row) => byMoment(row, cut) <= 0);
    if (candidates.length > 0) {
      const head = await this.links.head(manager);
      let seq = head ? BigInt(head.seq) : 0n;
      let previous = head?.chain_hash ?? GENESIS_HASH;
      const links = candidates.map((row) => {
        seq += 1n;
        previous = linkHash(previous, seq.toString(), row.kind, row.id, row.row_hash);
        return { seq: seq.toString(), ...row, chainHash: previous };
      });
      await this.links.append(manager, links);
    }
    for (const kind of CHAINED_KINDS) await this.links.advanceFloor(manager, kind);
    return candidates.length;
  }
}

function byMoment(a: Candidate, b: Candidate): number {
  return (
    a.at.getTime() - b.at.getTime() ||
    compareText(a.kind, b.kind) ||
    a.id.length - b.id.length ||
    compareText(a.id, b.id)
  );
}
