import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { CHAINED_KINDS } from './audit-chain.entity.js';
import { AuditChainRepository } from './audit-chain.repository.js';
import { AuditChainService } from './audit-chain.service.js';
import { AuditArchiveRepository, type ArchiveRow } from './audit-archive.repository.js';
import {
  ARCHIVE_FORMAT,
  archiveFileName,
  ArchiveWriter,
  fileSha256,
  nextMonth,
  verifyArchiveFile,
  verifyArchives,
  type ArchiveBreak,
  type ArchivesReport,
} from './audit-archive-format.js';
import { AuditVerifierService, type VerificationReport } from './audit-verifier.service.js';
import { monthOf, type Month } from './audit-partitions.js';
import { GENESIS_HASH, linkHash } from './chain-hash.js';

/** One replica at a time writes archives. */
const ARCHIVE_LOCK_KEY = 74_111_013;
const BATCH = 5000;

/** `YYYY-MM` of a month. */
export const monthKey = (month: Month) => month.start.toISOString().slice(0, 7);

/** The month `YYYY-MM` names (UTC), or undefined when it names none. */
export function parseMonth(key: string): Month | undefined {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(key);
  return match ? monthOf(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1))) : undefined;
}

export interface ArchiveResult {
  month: string;
  file: string;
  sha256: string;
  firstSeq: string;
  lastSeq: string;
  links: number;
  bytes: number;
  /** False: the month was archived already (nothing written). */
  written: boolean;
}

/** Archives verified alone, then joined to the live chain and that chain verified. */
export interface JoinedReport extends ArchivesReport {
  /** The live chain's verification (a full walk from its start or retention cut). */
  live: VerificationReport | null;
  /** Where the archives meet the live chain. */
  joined: string | null;
}

/** A month that cannot be archived yet, and why. */
export interface NotArchived {
  month: string;
  reason: string;
}

/**
 * Archives closed months of the trail (docs/audit-and-webhooks.md, The archive of a month): one file a
 * month in AUDIT_ARCHIVE_DIR, written under a temporary name, synced and renamed, read back and
 * verified, then recorded in `audit_archives`. A month is closed once it is over, every row dated in
 * it (or before) is sealed and a signed checkpoint covers its last link. Its archive holds the links
 * from the one after the previous month's archive to that checkpoint's, so that archives follow one
 * another without a gap; the few links of the next month's first moments sealed before that
 * checkpoint are in it too. The content depends only on the chain: a month written twice is the same.
 */
@Injectable()
export class AuditArchiveService implements OnModuleInit {
  constructor(
    private readonly links: AuditChainRepository,
    private readonly archives: AuditArchiveRepository,
    private readonly chain: AuditChainService,
    private readonly verifier: AuditVerifierService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'audit-archive',
      intervalMs: this.config.audit.archiveIntervalMs,
      run: async () => {
        const { written, waiting } = await this.archiveClosed({ wait: false });
        for (const archive of written)
          this.logger.info({ ...archive }, 'audit archive: a closed month archived');
        if (waiting) this.logger.info({ ...waiting }, 'audit archive: a month not archived yet');
      },
    });
  }

  /** The archive directory's path of a file. */
  pathOf(fileName: string): string {
    return join(this.config.audit.archiveDir, fileName);
  }

  /**
   * Archives every closed month not archived yet, oldest first, from the month after the newest
   * archive (or the oldest month the chain holds); stops at the first month not closed (`waiting`).
   */
  async archiveClosed(
    options: { now?: Date; wait?: boolean } = {},
  ): Promise<{ written: ArchiveResult[]; waiting?: NotArchived }> {
    const now = options.now ?? new Date();
    const recorded = await this.archives.archives();
    const newest = recorded.at(-1);
    let month: Month | undefined;
    if (newest) month = monthOf(parseMonth(newest.month)!.start, 1);
    else {
      const oldest = await this.links.readSnapshot((manager) =>
        this.archives.oldestLinkedAt(manager),
      );
      if (oldest) month = monthOf(oldest);
    }
    const written: ArchiveResult[] = [];
    for (; month && month.end <= now; month = monthOf(month.start, 1)) {
      const result = await this.archiveMonth(monthKey(month), { now, wait: options.wait });
      if ('reason' in result) return { written, waiting: result };
      written.push(result);
    }
    return { written };
  }

  /** Archives one month (`YYYY-MM`) once closed; a month archived already is left as it is. */
  async archiveMonth(
    key: string,
    options: { now?: Date; wait?: boolean } = {},
  ): Promise<ArchiveResult | NotArchived> {
    const month = parseMonth(key);
    if (!month) throw new Error(`${key} is not a month (YYYY-MM)`);
    const now = options.now ?? new Date();
    const done = await this.archives.archiveOf(key);
    if (done) return resultOf(done, false);
    if (month.end > now) return { month: key, reason: 'the month is not over' };
    const fileName = archiveFileName(key);
    const path = this.pathOf(fileName);
    await mkdir(this.config.audit.archiveDir, { recursive: true });
    const temporary = this.pathOf(
      `.${fileName}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
    );
    const result = await this.archives.underLock(
      ARCHIVE_LOCK_KEY,
      options.wait ?? true,
      async () => {
        if (await this.archives.archiveOf(key)) return undefined;
        await this.removeTemporaries(fileName);
        const range = await this.links.readSnapshot((manager) => this.rangeOf(manager, key, month));
        if ('reason' in range) return range;
        const writer = new ArchiveWriter(temporary);
        let links: number;
        try {
          links = await this.writeRange(writer, key, range);
          await writer.end();
          await syncFile(temporary);
        } catch (error) {
          writer.destroy();
          await unlink(temporary).catch(() => undefined);
          throw error;
        }
        await rename(temporary, path);
        await syncFile(this.config.audit.archiveDir);
        // Recorded only once it reads back whole: retention trusts the record.
        const { summary, firstBreak } = await verifyArchiveFile(path, this.chain.trustedKeys());
        if (!summary)
          throw new Error(
            `the archive of ${key} does not read back (${firstBreak?.problem} at line ${firstBreak?.line}: ${firstBreak?.detail})`,
          );
        const { size } = await stat(path);
        const row = {
          month: key,
          file_name: fileName,
          sha256: summary.sha256,
          first_seq: summary.firstSeq,
          last_seq: summary.lastSeq,
          rows: String(links),
          bytes: String(size),
        };
        await this.archives.record(row);
        return resultOf(row, true);
      },
    );
    if (result) return result;
    const recorded = await this.archives.archiveOf(key);
    return recorded
      ? resultOf(recorded, false)
      : { month: key, reason: 'another replica is archiving' };
  }

  /**
   * Verifies archives alone (verifyArchives), then joined to the live chain: where the live chain was
   * cut by retention, the archives hold the cut's link with the cut's hash (a cut past the last archive
   * is a missing month); where the live chain still holds the last archived link, it has the archive's
   * hash. Then the live chain is verified from its start or cut.
   */
  async verifyJoined(paths: string[]): Promise<JoinedReport> {
    const archived = await verifyArchives(paths, this.chain.trustedKeys());
    if (!archived.ok) return { ...archived, live: null, joined: null };
    const join = await this.links.readSnapshot((manager) => this.join(manager, archived));
    if ('problem' in join)
      return { ...archived, ok: false, firstBreak: join, live: null, joined: null };
    const live = await this.verifier.verify({ from: 'start', trigger: 'cli' });
    return {
      ...archived,
      ok: live.ok,
      head: live.head ?? archived.head,
      live,
      joined: join.joined,
    };
  }

  private async join(
    manager: EntityManager,
    archived: ArchivesReport,
  ): Promise<ArchiveBreak | { joined: string | null }> {
    const first = archived.archives[0];
    const last = archived.archives.at(-1);
    if (!first || !last) return { joined: null };
    const cut = await this.links.latestCut(manager);
    const mismatch = (seq: string, detail: string): ArchiveBreak => ({
      problem: 'join-mismatch',
      file: last.file,
      seq,
      detail,
    });
    if (cut && BigInt(cut.seq) > BigInt(last.lastSeq)) {
      const missing = (BigInt(last.lastSeq) + 1n).toString();
      const month = (await this.archives.monthHolding(missing, manager)) ?? nextMonth(last.month);
      return {
        problem: 'missing-month',
        month,
        seq: missing,
        detail: `links ${missing} to ${cut.seq} were dropped by retention and no archive given holds them (the archive of ${month})`,
      };
    }
    if (cut && BigInt(cut.seq) >= BigInt(first.firstSeq) - 1n) {
      const seq = String(cut.seq);
      const hash =
        BigInt(seq) === BigInt(first.firstSeq) - 1n
          ? first.previousHash
          : archived.archives.flatMap((a) => a.checkpoints).find((c) => c.seq === seq)?.chainHash;
      if (hash !== cut.chain_hash)
        return mismatch(seq, `the retention cut at link ${seq} is not the archives' link ${seq}`);
      const liveHash = await this.archives.linkHashAt(manager, last.lastSeq);
      if (liveHash && liveHash !== last.lastHash)
        return mismatch(
          last.lastSeq,
          `the live chain's link ${last.lastSeq} differs from the archived one`,
        );
      return { joined: `at the retention cut, link ${seq}` };
    }
    const liveHash = await this.archives.linkHashAt(manager, last.lastSeq);
    if (!liveHash)
      return mismatch(
        last.lastSeq,
        `the live chain has no link ${last.lastSeq} and no retention cut past it`,
      );
    if (liveHash !== last.lastHash)
      return mismatch(
        last.lastSeq,
        `the live chain's link ${last.lastSeq} differs from the archived one`,
      );
    return { joined: `at link ${last.lastSeq}, which the live chain still holds` };
  }

  /** Whether the recorded archive of a month is in the directory with the sha256 it was written with. */
  async fileIntact(fileName: string, sha256: string): Promise<boolean> {
    try {
      return (await fileSha256(this.pathOf(fileName))) === sha256;
    } catch {
      return false;
    }
  }

  /**
   * The links a month's archive holds: from the one after the previous month's end (its archive, the
   * retention cut, or the checkpoint covering the last link dated before the month) to the first
   * checkpoint covering the month's last link; or why the month is not closed.
   */
  private async rangeOf(
    manager: EntityManager,
    key: string,
    month: Month,
  ): Promise<{ first: string; last: string; previousHash: string } | NotArchived> {
    for (const kind of CHAINED_KINDS) {
      const row = await this.archives.unsealedBefore(manager, kind, month.end);
      if (row)
        return {
          month: key,
          reason: `${kind} ${row.id} (${row.at.toISOString()}) is not sealed yet`,
        };
    }
    const cut = await this.links.latestCut(manager);
    const recordedBefore = (await this.archives.archives(manager))
      .filter((row) => row.month < key)
      .map((row) => BigInt(row.last_seq));
    let previousEnd = [cut ? BigInt(cut.seq) : 0n, ...recordedBefore].reduce(
      (a, b) => (a > b ? a : b),
      0n,
    );
    const lastBefore = await this.archives.lastLinkBefore(manager, month.start);
    if (lastBefore && BigInt(lastBefore) > previousEnd) {
      const covering = await this.archives.checkpointFrom(manager, lastBefore);
      if (!covering)
        return {
          month: key,
          reason: `no signed checkpoint covers link ${lastBefore} of the month before yet`,
        };
      previousEnd = BigInt(covering.seq);
    }
    const lastIn = await this.archives.lastLinkBefore(manager, month.end);
    let last = previousEnd;
    if (lastIn && BigInt(lastIn) > previousEnd) {
      const covering = await this.archives.checkpointFrom(manager, lastIn);
      if (!covering)
        return {
          month: key,
          reason: `no signed checkpoint covers the month's last link ${lastIn} yet`,
        };
      last = BigInt(covering.seq);
    }
    let previousHash = GENESIS_HASH;
    if (previousEnd > 0n) {
      const checkpoint = await this.archives.checkpointFrom(manager, previousEnd.toString());
      const hash =
        checkpoint && BigInt(checkpoint.seq) === previousEnd
          ? checkpoint.chain_hash
          : await this.archives.linkHashAt(manager, previousEnd.toString());
      if (!hash) throw new Error(`the hash of link ${previousEnd} is nowhere to be found`);
      previousHash = hash;
    }
    return { first: (previousEnd + 1n).toString(), last: last.toString(), previousHash };
  }

  /** Writes the header, the links with their rows and checkpoints; how many links. */
  private async writeRange(
    writer: ArchiveWriter,
    key: string,
    range: { first: string; last: string; previousHash: string },
  ): Promise<number> {
    await writer.write({
      type: 'header',
      format: ARCHIVE_FORMAT,
      month: key,
      tenants: 'all',
      firstSeq: range.first,
      lastSeq: range.last,
      previousHash: range.previousHash,
    });
    if (BigInt(range.last) < BigInt(range.first)) return 0;
    const checkpoints = new Map(
      (
        await this.links.readSnapshot((manager) =>
          this.archives.checkpointsIn(manager, range.first, range.last),
        )
      ).map((c) => [String(c.seq), c]),
    );
    let expected = BigInt(range.first);
    let previous = range.previousHash;
    for (;;) {
      // A transaction a batch: a closed month no longer changes, and no snapshot is held for hours.
      const rows = await this.links.readSnapshot((manager) =>
        this.archives.linksWithRows(manager, expected.toString(), range.last, BATCH),
      );
      for (const row of rows) {
        // A month is archived only whole and intact: a break is for audit:verify to name.
        const broken = (why: string) =>
          new Error(
            `link ${row.seq} (${row.entry_kind} ${row.entry_id}): ${why}; run audit:verify`,
          );
        if (BigInt(row.seq) !== expected) throw broken(`link ${expected} is missing`);
        if (row.row === null) throw broken('its row is gone');
        if (createHash('sha256').update(row.row).digest('hex') !== row.row_hash)
          throw broken('its row differs from what was sealed');
        previous = linkHash(previous, row.seq, row.entry_kind, row.entry_id, row.row_hash);
        if (previous !== row.chain_hash) throw broken('its hash does not follow');
        await writer.write({
          type: 'link',
          seq: row.seq,
          kind: row.entry_kind,
          id: row.entry_id,
          at: row.at,
          tenant: row.tenant_id,
          rowHash: row.row_hash,
          chainHash: row.chain_hash,
          sealedAt: row.sealed_at,
          row: row.row,
        });
        const checkpoint = checkpoints.get(row.seq);
        if (checkpoint)
          await writer.write({
            type: 'checkpoint',
            seq: row.seq,
            chainHash: checkpoint.chain_hash,
            signedAt: checkpoint.signed_at.toISOString(),
            keyId: checkpoint.key_id,
            signature: checkpoint.signature,
          });
        expected++;
      }
      if (rows.length < BATCH) break;
    }
    if (expected - 1n !== BigInt(range.last))
      throw new Error(`link ${expected} is missing from the chain; run audit:verify`);
    return Number(expected - BigInt(range.first));
  }

  /** A temporary file of this month left by a writer that died: never an archive. */
  private async removeTemporaries(fileName: string): Promise<void> {
    for (const name of await readdir(this.config.audit.archiveDir))
      if (name.startsWith(`.${fileName}.`) && name.endsWith('.tmp'))
        await unlink(this.pathOf(name)).catch(() => undefined);
  }
}

function resultOf(
  row: Omit<ArchiveRow, 'written_at' | 'verified_at'>,
  written: boolean,
): ArchiveResult {
  return {
    month: row.month,
    file: row.file_name,
    sha256: row.sha256,
    firstSeq: String(row.first_seq),
    lastSeq: String(row.last_seq),
    links: Number(row.rows),
    bytes: Number(row.bytes),
    written,
  };
}

/** Flushes a file's (or a directory's) content to disk. */
async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
