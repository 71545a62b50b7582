import { AuditTrailModule } from '../audit/trail/audit-trail.module.js';
import { AuditChainService } from '../audit/trail/audit-chain.service.js';
import { AuditVerifierService } from '../audit/trail/audit-verifier.service.js';
import type { CommandContext } from './commands.js';

/** The audit trail's chain and its verifier. */
export const MODULES = [AuditTrailModule];

export async function verifyAudit(context: CommandContext): Promise<number> {
  // --seal: first seal what is due, so that rows written a moment ago are verified too.
  if (context.args.options.seal) await context.app.get(AuditChainService).seal();
  const report = await context.app
    .get(AuditVerifierService)
    .verify({ from: context.args.options.full ? 'start' : 'last-verified', trigger: 'cli' });
  if (context.args.options.json) {
    context.out(JSON.stringify(report, null, 2));
    return report.ok ? 0 : 1;
  }
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
    return 1;
  }
  context.out('the chain verifies');
  return 0;
}
