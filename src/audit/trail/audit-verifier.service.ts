import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { verify } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { CHAINED_KINDS, type ChainedKind } from './audit-chain.entity.js';
import { AuditChainRepository } from './audit-chain.repository.js';
import { AuditChainService } from './audit-chain.service.js';
import { checkpointStatement, GENESIS_HASH, linkHash } from './chain-hash.js';

export type BreakKind =
  | 'gap'
  | 'row-deleted'
  | 'row-edited'
  | 'link-altered'
  | 'row-unsealed'
  | 'late-seal'
  | 'checkpoint-mismatch'
  | 'checkpoint-signature'
  | 'checkpoint-unknown-key'
  | 'cut-too-early'
  | 'cut-unsigned';

export interface ChainBreak {
  problem: BreakKind;
  /** The link where the chain stops verifying (absent for a row that has no link). */
  seq?: string;
  entryKind?: ChainedKind;
  entryId?: string;
  detail: string;
}

export interface VerificationReport {
  ok: boolean;
  verifiedAt: string;
  /** Walked from the chain's start (or its retention cut); false: from `from`, a checkpoint verified before. */
  full: boolean;
  from: { seq: string; chainHash: string } | null;
  links: number;
  head: { seq: string; chainHash: string } | null;
  checkpoints: {
    count: number;
    /** The newest checkpoint the chain was verified against. */
    latest: { seq: string; chainHash: string; signedAt: string; keyId: string } | null;
  };
  /** The first broken link (in chain order), or the first row the chain does not hold. */
  firstBreak: ChainBreak | null;
}

const BATCH = 5000;

/** Who asked: recorded with the verification. */
export type VerificationTrigger = 'scheduled' | 'cli' | 'api' | 'export' | 'internal';

export interface VerifyOptions {
  /**
   * `start` (the default): a full walk from the chain's first link or retention cut. `last-verified`:
   * from the newest signed checkpoint a verification passed (still signed, still in the chain, past the
   * last cut), so a daily verification costs what a day wrote; a full walk when there is none.
   */
  from?: 'start' | 'last-verified';
  trigger?: VerificationTrigger;
  /** The verification's row, when the caller claimed it (the scheduled job). */
  recordId?: string;
  /** How much earlier than a row linked ahead of it a row may have become sealable (default lagMs). */
  lateSealMs?: number;
  /**
   * A link the caller verified before (its number and hash): the walk starts after it, and only what
   * was linked since is checked (a retention cut before it is taken as verified too).
   */
  since?: { seq: string; chainHash: string };
}

/**
 * Checks the audit chain from its first link: numbering without gaps, each row still there with the
 * content it was sealed with, each link hash, each signed checkpoint (signature and the link hash at
 * its number), then that no row sealable for longer than two passes and a minute is outside the chain
 * and that no row was sealed long after rows that became sealable after it (a back-dated insert).
 * Reports the first break.
 */
@Injectable()
export class AuditVerifierService {
  constructor(
    private readonly links: AuditChainRepository,
    private readonly chain: AuditChainService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async verify(options: VerifyOptions = {}): Promise<VerificationReport> {
    const id =
      options.recordId ??
      (await this.links.startVerification(
        options.trigger ?? 'internal',
        options.from !== 'last-verified',
      ));
    const report = await this.links.readSnapshot((manager) => this.verifyIn(manager, options));
    await this.links.finishVerification(id, {
      ok: report.ok,
      full: report.full,
      fromSeq: report.from?.seq ?? null,
      links: report.links,
      head: report.head,
      checkpoint: report.checkpoints.latest,
      problem: report.firstBreak?.problem ?? null,
    });
    return report;
  }

  private async verifyIn(
    manager: EntityManager,
    options: VerifyOptions,
  ): Promise<VerificationReport> {
    const checkpoints = await this.links.checkpoints(manager);
    const bySeq = new Map(checkpoints.map((c) => [String(c.seq), c]));
    const trusted = this.chain.trustedKeys();
    const trustedIds = trusted.size > 0 ? [...trusted.keys()].join(', ') : '(none)';
    /** Whether a trusted key signed the checkpoint: signed, a key not trusted, or a bad signature. */
    const signatureOf = (checkpoint: (typeof checkpoints)[number]) => {
      const key = trusted.get(checkpoint.key_id);
      if (!key) return 'unknown-key' as const;
      const valid = verify(
        null,
        Buffer.from(
          checkpointStatement(String(checkpoint.seq), checkpoint.chain_hash, checkpoint.signed_at),
        ),
        key.publicKey,
        Buffer.from(checkpoint.signature, 'base64'),
      );
      return valid ? ('signed' as const) : ('bad-signature' as const);
    };
    let since = options.since;
    let latest: VerificationReport['checkpoints']['latest'] = null;
    if (!since && options.from === 'last-verified') {
      const verified = await this.links.lastVerifiedCheckpoint(manager);
      const checkpoint = verified && bySeq.get(String(verified.checkpoint_seq));
      const lastCut = await this.links.latestCut(manager);
      // Anything else (re-signed, gone, cut away) is for the full walk to judge.
      if (
        checkpoint &&
        checkpoint.chain_hash === verified.checkpoint_hash &&
        signatureOf(checkpoint) === 'signed' &&
        (!lastCut || BigInt(lastCut.seq) < BigInt(checkpoint.seq))
      ) {
        since = { seq: String(checkpoint.seq), chainHash: checkpoint.chain_hash };
        latest = {
          ...since,
          signedAt: checkpoint.signed_at.toISOString(),
          keyId: checkpoint.key_id,
        };
      }
    }
    const from = since ? { seq: since.seq, chainHash: since.chainHash } : null;
    const report = (
      firstBreak: ChainBreak | null,
      links: number,
      head: VerificationReport['head'],
      latest: VerificationReport['checkpoints']['latest'],
    ): VerificationReport => ({
      ok: firstBreak === null,
      verifiedAt: new Date().toISOString(),
      full: from === null,
      from,
      links,
      head,
      checkpoints: { count: checkpoints.length, latest },
      firstBreak,
    });

    let expected = 1n;
    let previous = GENESIS_HASH;
    let links = 0;
    // After a retention cut the chain starts from the cut's link, which a signed checkpoint vouches for.
    const cut = since ? undefined : await this.links.latestCut(manager);
    if (cut) {
      const seq = String(cut.seq);
      const retentionMs = this.config.audit.retentionDays * 86_400_000;
      if (cut.removed_before.getTime() > cut.cut_at.getTime() - retentionMs + 60_000)
        return report(
          {
            seq,
            problem: 'cut-too-early',
            detail: `the trail before ${cut.removed_before.toISOString()} was removed at ${cut.cut_at.toISOString()}, inside the retention period of ${this.config.audit.retentionDays} days`,
          },
          0,
          null,
          null,
        );
      const checkpoint = bySeq.get(seq);
      if (checkpoint?.chain_hash !== cut.chain_hash || signatureOf(checkpoint) !== 'signed')
        return report(
          {
            seq,
            problem: 'cut-unsigned',
            detail: `the retention cut at link ${seq} matches no checkpoint signed by a trusted key (${trustedIds})`,
          },
          0,
          null,
          null,
        );
      latest = {
        seq,
        chainHash: cut.chain_hash,
        signedAt: checkpoint.signed_at.toISOString(),
        keyId: checkpoint.key_id,
      };
      expected = BigInt(seq) + 1n;
      previous = cut.chain_hash;
    }
    // The sealer seals rows in the order they became sealable (sealableAtSql), each pass what has
    // become sealable by then. So a row dated, by that moment, well before a row sealed ahead of it was
    // not in the table when it should have been sealed: slipped in after the fact. Dated by its creation
    // or its call's deadline instead, a row completed early (a POS payment answered in seconds, its
    // deadline 200 s ahead) would look newer than the rows sealed after it, and hide any real break.
    const lateSealMs = options.lateSealMs ?? this.chain.lagMs();
    const timing = this.chain.timing();
    let newestSealed = 0;
    if (since) {
      const { seq, chainHash } = since;
      const [link] = await this.links.linksFrom(manager, seq, timing, 1);
      if (String(link?.seq) !== seq || link.chain_hash !== chainHash)
        return report(
          { seq, problem: 'link-altered', detail: `link ${seq} is not the one verified before` },
          0,
          null,
          null,
        );
      newestSealed = link.at?.getTime() ?? 0;
      expected = BigInt(seq) + 1n;
      previous = chainHash;
    }
    for (;;) {
      const rows = await this.links.linksFrom(manager, expected.toString(), timing, BATCH);
      for (const row of rows) {
        const seq = String(row.seq);
        const at = { seq, entryKind: row.entry_kind, entryId: String(row.entry_id) };
        if (BigInt(seq) !== expected)
          return report(
            { ...at, problem: 'gap', detail: `link ${expected} is missing; the next is ${seq}` },
            links,
            null,
            latest,
          );
        // Not at its date: its date was changed (an edit), or it is gone.
        if (row.current_hash === null)
          row.current_hash = await this.links.currentHashById(
            manager,
            row.entry_kind,
            String(row.entry_id),
          );
        if (row.current_hash === null)
          return report(
            {
              ...at,
              problem: 'row-deleted',
              detail: `${row.entry_kind} ${row.entry_id} was sealed and is gone`,
            },
            links,
            null,
            latest,
          );
        if (row.current_hash !== row.row_hash)
          return report(
            {
              ...at,
              problem: 'row-edited',
              detail: `${row.entry_kind} ${row.entry_id} differs from what was sealed`,
            },
            links,
            null,
            latest,
          );
        const hash = linkHash(previous, seq, row.entry_kind, String(row.entry_id), row.row_hash);
        if (hash !== row.chain_hash)
          return report(
            {
              ...at,
              problem: 'link-altered',
              detail: `the hash of link ${seq} does not follow from the link before it`,
            },
            links,
            null,
            latest,
          );
        if (row.at && row.at.getTime() < newestSealed - lateSealMs)
          return report(
            {
              ...at,
              problem: 'late-seal',
              detail: `${row.entry_kind} ${row.entry_id} became sealable at ${row.at.toISOString()}, and was sealed after a row sealable at ${new Date(newestSealed).toISOString()}: inserted after the fact?`,
            },
            links,
            null,
            latest,
          );
        const checkpoint = bySeq.get(seq);
        if (checkpoint) {
          if (checkpoint.chain_hash !== hash)
            return report(
              {
                ...at,
                problem: 'checkpoint-mismatch',
                detail: `the chain at link ${seq} is not what checkpoint ${seq} signed`,
              },
              links,
              null,
              latest,
            );
          const signature = signatureOf(checkpoint);
          if (signature === 'unknown-key')
            return report(
              {
                ...at,
                problem: 'checkpoint-unknown-key',
                detail: `checkpoint ${seq} names key ${checkpoint.key_id}, which is not trusted (${trustedIds}): a retired key missing from AUDIT_TRUSTED_KEYS_FILE, or a forgery`,
              },
              links,
              null,
              latest,
            );
          if (signature === 'bad-signature')
            return report(
              {
                ...at,
                problem: 'checkpoint-signature',
                detail: `checkpoint ${seq} is not signed by key ${checkpoint.key_id}`,
              },
              links,
              null,
              latest,
            );
          latest = {
            seq,
            chainHash: hash,
            signedAt: checkpoint.signed_at.toISOString(),
            keyId: checkpoint.key_id,
          };
        }
        if (row.at) newestSealed = Math.max(newestSealed, row.at.getTime());
        previous = hash;
        expected += 1n;
        links++;
      }
      if (rows.length < BATCH) break;
    }
    const head =
      links > 0 ? { seq: (expected - 1n).toString(), chainHash: previous } : (from ?? null);
    for (const checkpoint of checkpoints)
      if (BigInt(checkpoint.seq) >= expected)
        return report(
          {
            seq: String(checkpoint.seq),
            problem: 'checkpoint-mismatch',
            detail: `checkpoint ${checkpoint.seq} signed a link the chain no longer has`,
          },
          links,
          head,
          latest,
        );
    const unsealed = await this.firstUnsealed(manager, since !== undefined);
    return report(unsealed, links, head, latest);
  }

  private async firstUnsealed(
    manager: EntityManager,
    aboveFloor: boolean,
  ): Promise<ChainBreak | null> {
    for (const kind of CHAINED_KINDS) {
      const row = await this.links.firstUnsealed(
        manager,
        kind,
        this.chain.lagMs(),
        this.chain.timing(),
        aboveFloor,
      );
      if (row)
        return {
          problem: 'row-unsealed',
          entryKind: kind,
          entryId: String(row.id),
          detail: `${kind} ${row.id} (${row.at.toISOString()}) is not in the chain: inserted around the sealer?`,
        };
    }
    return null;
  }
}
