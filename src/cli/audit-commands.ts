import { AuditTrailModule } from '../audit/trail/audit-trail.module.js';
import { AuditChainService } from '../audit/trail/audit-chain.service.js';
import {
  AuditVerifierService,
  type VerificationReport,
} from '../audit/trail/audit-verifier.service.js';
import {
  AuditArchiveService,
  parseMonth,
  type ArchiveResult,
  type NotArchived,
} from '../audit/trail/audit-archive.service.js';
import { verifyArchives, type ArchivesReport } from '../audit/trail/audit-archive-format.js';
import { loadAuditSigningKey, loadTrustedAuditKeys } from '../audit/trail/audit-signing-key.js';
import { loadConfig } from '../platform/config/app-config.js';
import { archivesOffline, UsageError, type CommandContext } from './commands.js';

/** The audit trail's chain, its verifier and its archives. */
export const MODULES = [AuditTrailModule];

export async function verifyAudit(context: CommandContext): Promise<number> {
  const { options, positional } = context.args;
  if (options.archive) return verifyArchivesCommand(context);
  if (positional.length)
    throw new UsageError(`audit:verify: files are verified with --archive FILE…`);
  // --seal: first seal what is due, so that rows written a moment ago are verified too.
  if (options.seal) await context.app.get(AuditChainService).seal();
  const report = await context.app
    .get(AuditVerifierService)
    .verify({ from: options.full ? 'start' : 'last-verified', trigger: 'cli' });
  if (options.json) {
    context.out(JSON.stringify(report, null, 2));
    return report.ok ? 0 : 1;
  }
  printChainReport(context, report);
  if (report.firstBreak) return 1;
  context.out('the chain verifies');
  return 0;
}

function printChainReport(context: CommandContext, report: VerificationReport): void {
  const latest = report.checkpoints.latest;
  context.out(
    `walked from:    ${report.from ? `checkpoint ${report.from.seq} (verified before)` : "the chain's start"}`,
  );
  context.out(`links verified: ${report.links}`);
  context.out(
    `head:           ${report.head ? `${report.head.seq} ${report.head.chainHash}` : '(empty chain)'}`,
  );
  context.out(
    `checkpoints:    ${report.checkpoints.count}${latest ? `, latest ${latest.seq} signed ${latest.signedAt} by key ${latest.keyId}` : ''}`,
  );
  if (report.firstBreak) {
    const at = report.firstBreak;
    context.out(
      `BROKEN at ${at.seq ? `link ${at.seq}` : 'a row outside the chain'}${at.entryKind ? ` (${at.entryKind} ${at.entryId})` : ''}: ${at.problem}: ${at.detail}`,
    );
  }
}

/** `audit:verify --archive FILE…`: offline without a database, else joined to the live chain. */
async function verifyArchivesCommand(context: CommandContext): Promise<number> {
  const { options, positional } = context.args;
  if (positional.length === 0)
    throw new UsageError('audit:verify --archive: name the archive files');
  let report: ArchivesReport & { live?: VerificationReport | null; joined?: string | null };
  if (archivesOffline(options)) {
    const config = loadConfig();
    report = await verifyArchives(
      positional,
      loadTrustedAuditKeys(config, loadAuditSigningKey(config)),
    );
  } else report = await context.app.get(AuditArchiveService).verifyJoined(positional);
  if (options.json) {
    context.out(JSON.stringify(report, null, 2));
    return report.ok ? 0 : 1;
  }
  for (const archive of report.archives)
    context.out(
      `archive ${archive.month}: links ${archive.firstSeq}..${archive.lastSeq} (${archive.links}), ${archive.checkpoints.length} checkpoints, ${archive.file} sha256 ${archive.sha256}`,
    );
  const at = report.firstBreak;
  if (at) {
    context.out(
      `BROKEN ${at.file ? `in ${at.file}${at.line ? ` line ${at.line}` : ''}` : ''}${at.seq ? ` (link ${at.seq})` : ''}: ${at.problem}: ${at.detail}`,
    );
    return 1;
  }
  if (report.joined) context.out(`joined to the live chain ${report.joined}`);
  if (report.live) {
    printChainReport(context, report.live);
    if (!report.live.ok) return 1;
    context.out('the archives and the live chain verify');
    return 0;
  }
  context.out('the archives verify (offline)');
  return 0;
}

/** `audit:archive [--month YYYY-MM]`: one month, else every closed month not archived yet. */
export async function archiveAudit(context: CommandContext): Promise<number> {
  const service = context.app.get(AuditArchiveService);
  const month = context.args.options.month;
  let written: ArchiveResult[];
  let waiting: NotArchived | undefined;
  if (typeof month === 'string') {
    if (!parseMonth(month)) throw new UsageError(`--month ${month}: not a month (YYYY-MM)`);
    const result = await service.archiveMonth(month);
    [written, waiting] = 'reason' in result ? [[], result] : [[result], undefined];
  } else ({ written, waiting } = await service.archiveClosed());
  if (context.args.options.json) {
    context.out(JSON.stringify({ archives: written, waiting: waiting ?? null }, null, 2));
    return typeof month === 'string' && waiting ? 1 : 0;
  }
  for (const archive of written)
    context.out(
      `${archive.month}: ${archive.written ? 'written' : 'archived before'} ${service.pathOf(archive.file)} (links ${archive.firstSeq}..${archive.lastSeq}, ${archive.links} rows, ${archive.bytes} bytes, sha256 ${archive.sha256})`,
    );
  if (waiting) context.out(`${waiting.month}: not archived: ${waiting.reason}`);
  else if (written.length === 0) context.out('no closed month left to archive');
  return typeof month === 'string' && waiting ? 1 : 0;
}
