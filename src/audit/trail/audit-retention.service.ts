import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { verify } from 'node:crypto';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { CHAINED_KINDS } from './audit-chain.entity.js';
import { AuditChainRepository } from './audit-chain.repository.js';
import { AuditChainService } from './audit-chain.service.js';
import { AuditArchiveRepository } from './audit-archive.repository.js';
import { AuditArchiveService, monthKey, parseMonth } from './audit-archive.service.js';
import { AuditPartitionsService, PARTITIONED_TABLES, type Month } from './audit-partitions.js';
import { checkpointStatement } from './chain-hash.js';

export interface DroppedMonth {
  month: string;
  /** The retention cut: the archive's last link, and its hash. */
  seq: string;
  chainHash: string;
  rowsRemoved: number;
  removedBefore: Date;
}

/** A month past the retention period still in the database, and why. */
export interface KeptMonth {
  month: string;
  reason: string;
}

const DAY_MS = 86_400_000;

/**
 * Removes the trail older than AUDIT_RETENTION_DAYS a whole month at a time, oldest first: a month
 * whose end is past the period has its partitions (access log and chain) detached and dropped, once
 * it is archived (recorded in audit_archives, its file still there with the sha256 it was written
 * with) and a signed checkpoint covers its archive's last link. The rows sealed by the links up to that
 * checkpoint outside the month's partitions (status changes, the next month's first moments) go with
 * it, and the cut is recorded at that checkpoint: the verifier starts from its hash, and the archives
 * join the live chain there. A month not archived is never dropped, nor any after it (a cut is a
 * prefix of the chain): the run logs why and `portico_audit_retention_kept_months` counts it. Runs
 * under the sealer's lock.
 */
@Injectable()
export class AuditRetentionService implements OnModuleInit {
  constructor(
    private readonly links: AuditChainRepository,
    private readonly archives: AuditArchiveRepository,
    private readonly archiver: AuditArchiveService,
    private readonly chain: AuditChainService,
    private readonly partitions: AuditPartitionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    const { retentionDays, retentionIntervalMs } = this.config.audit;
    this.scheduler.register({
      name: 'audit-retention',
      intervalMs: retentionDays === 0 ? 0 : retentionIntervalMs,
      run: async () => {
        const { dropped, kept } = await this.dropExpiredMonths();
        for (const month of dropped)
          this.logger.info({ ...month }, 'audit retention: an archived month dropped');
        if (kept[0])
          this.logger.warn(
            { ...kept[0], monthsKept: kept.length },
            'audit retention: a month past the retention period is kept',
          );
      },
    });
  }

  /** The months whose partitions hold only rows older than the retention period, oldest first. */
  async expiredMonths(now = new Date()): Promise<Month[]> {
    const { retentionDays } = this.config.audit;
    if (retentionDays === 0) return [];
    const expiredBefore = now.getTime() - retentionDays * DAY_MS;
    const names = new Set<string>();
    for (const table of PARTITIONED_TABLES)
      for (const name of await this.partitions.partitionsOf(table)) {
        const match = /_p(\d{4})_(\d{2})$/.exec(name);
        if (match) names.add(`${match[1]}-${match[2]}`);
      }
    return [...names]
      .sort()
      .map((key) => parseMonth(key)!)
      .filter((month) => month.end.getTime() <= expiredBefore);
  }

  /** For the metric: the months past the period with no archive recorded. */
  async unarchivedExpiredMonths(now = new Date()): Promise<number> {
    const archived = new Set((await this.archives.archives()).map((row) => row.month));
    return (await this.expiredMonths(now)).filter((month) => !archived.has(monthKey(month))).length;
  }

  /** Drops the expired months that may go, oldest first; stops at the first that may not. */
  async dropExpiredMonths(
    now = new Date(),
  ): Promise<{ dropped: DroppedMonth[]; kept: KeptMonth[] }> {
    const expiredBefore = new Date(now.getTime() - this.config.audit.retentionDays * DAY_MS);
    const months = await this.expiredMonths(now);
    const dropped: DroppedMonth[] = [];
    for (const [index, month] of months.entries()) {
      const result = await this.dropMonth(month, expiredBefore);
      if ('reason' in result) {
        const kept = months.slice(index).map((later, i) => ({
          month: monthKey(later),
          reason: i === 0 ? result.reason : `an older month (${result.month}) is kept`,
        }));
        return { dropped, kept };
      }
      dropped.push(result);
    }
    return { dropped, kept: [] };
  }

  private async dropMonth(month: Month, expiredBefore: Date): Promise<DroppedMonth | KeptMonth> {
    const key = monthKey(month);
    const kept = (reason: string): KeptMonth => ({ month: key, reason });
    const archive = await this.archives.archiveOf(key);
    if (!archive) return kept('not archived (npm run cli -- audit:archive)');
    if (!(await this.archiver.fileIntact(archive.file_name, archive.sha256)))
      return kept(
        `its archive ${archive.file_name} is missing from AUDIT_ARCHIVE_DIR or is not the file written`,
      );
    return this.links.transaction(async (manager) => {
      await this.links.lockSealer(manager, true);
      const why = await this.whyKeep(manager, month, archive.last_seq, expiredBefore);
      if (typeof why === 'string') return kept(why);
      await this.archives.markVerified(manager, key);
      const lastCut = await this.links.latestCut(manager);
      const cut = {
        month: key,
        seq: archive.last_seq,
        chainHash: why.chainHash,
        rowsRemoved: Number(archive.rows),
        removedBefore: why.removedBefore,
      };
      // An archive holding no link past the cut before it (an empty month) moves no cut.
      const moves = BigInt(archive.last_seq) > (lastCut ? BigInt(lastCut.seq) : 0n);
      // The rest of what the cut removes first (status changes, the next month's first moments), by
      // the month's links; then the month's partitions whole.
      if (moves) await this.links.removeThrough(manager, archive.last_seq, month);
      for (const table of PARTITIONED_TABLES) {
        const partition = `${table}_${month.name}`;
        await manager.query(`ALTER TABLE "${table}" DETACH PARTITION "${partition}"`);
        await manager.query(`DROP TABLE "${partition}"`);
      }
      if (moves) await this.links.recordCut(manager, cut);
      return cut;
    });
  }

  /**
   * Why the month must stay (a string), or the cut's hash and date: a trusted signature on the archive's
   * last link, nothing dated in the month past its archive or still unsealed, and every link the cut
   * removes dated before the period.
   */
  private async whyKeep(
    manager: EntityManager,
    month: Month,
    lastSeq: string,
    expiredBefore: Date,
  ): Promise<string | { chainHash: string; removedBefore: Date }> {
    const [checkpoint] = (await manager.query(
      'SELECT seq::text AS seq, chain_hash, signed_at, key_id, signature FROM audit_checkpoints WHERE seq = $1',
      [lastSeq],
    )) as { seq: string; chain_hash: string; signed_at: Date; key_id: string; signature: string }[];
    const key = checkpoint && this.chain.trustedKeys().get(checkpoint.key_id);
    const signed =
      key &&
      verify(
        null,
        Buffer.from(checkpointStatement(lastSeq, checkpoint.chain_hash, checkpoint.signed_at)),
        key.publicKey,
        Buffer.from(checkpoint.signature, 'base64'),
      );
    if (BigInt(lastSeq) > 0n && !signed)
      return `no checkpoint signed by a trusted key at its archive's last link ${lastSeq}`;
    // Every link the cut removes is in an archive: from the last cut on, archives without a gap.
    const lastCut = await this.links.latestCut(manager);
    let covered = lastCut ? BigInt(lastCut.seq) : 0n;
    for (const archive of await this.archives.archives(manager)) {
      if (BigInt(archive.last_seq) <= covered) continue;
      if (BigInt(archive.first_seq) > covered + 1n) break;
      covered = BigInt(archive.last_seq);
    }
    if (covered < BigInt(lastSeq))
      return `links ${covered + 1n} to ${lastSeq} are not all archived (an older month is not)`;
    const [late] = (await manager.query(
      'SELECT seq::text AS seq FROM audit_chain WHERE entry_at >= $1 AND entry_at < $2 AND seq > $3 LIMIT 1',
      [month.start, month.end, lastSeq],
    )) as { seq: string }[];
    if (late) return `link ${late.seq} of the month was sealed after its archive was written`;
    for (const kind of CHAINED_KINDS) {
      const row = await this.archives.unsealedBefore(manager, kind, month.end);
      if (row) return `${kind} ${row.id} of the month is not sealed`;
    }
    const [{ newest }] = (await manager.query(
      'SELECT max(entry_at) AS newest FROM audit_chain WHERE seq <= $1',
      [lastSeq],
    )) as { newest: Date | null }[];
    if (newest && newest >= expiredBefore)
      return `link ${lastSeq}'s cut would remove a row of ${newest.toISOString()}, inside the retention period`;
    const removedBefore = new Date(
      Math.max(month.end.getTime(), newest ? newest.getTime() + 1 : 0),
    );
    return { chainHash: checkpoint?.chain_hash ?? '', removedBefore };
  }
}
