import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { AuditChainRepository } from './audit-chain.repository.js';
import { AuditVerifierService, type VerificationReport } from './audit-verifier.service.js';

/** A run is due when no replica started one within this share of the interval (jitter aside). */
const DUE_SHARE = 0.9;

/**
 * Verifies the chain every AUDIT_VERIFY_INTERVAL_MS from the newest checkpoint a verification passed
 * (what was sealed since), on one replica: the first to claim the run (an advisory lock and its row in
 * `audit_verifications`) when none started within the interval. The result is recorded, hence the
 * metrics `portico_audit_last_verification_*`; a break is logged as an error.
 */
@Injectable()
export class AuditVerificationJob implements OnModuleInit {
  constructor(
    private readonly links: AuditChainRepository,
    private readonly verifier: AuditVerifierService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    const { verifyIntervalMs } = this.config.audit;
    // Also at start: a replica started after a day without verification verifies at once (the claim
    // keeps it to one run per interval across replicas and restarts).
    this.scheduler.register({
      name: 'audit-verify',
      intervalMs: verifyIntervalMs,
      runAtStart: verifyIntervalMs > 0,
      run: () => this.run(),
    });
  }

  /** One turn: the report, or undefined when another replica verified within the interval. */
  async run(
    intervalMs = this.config.audit.verifyIntervalMs,
  ): Promise<VerificationReport | undefined> {
    const recordId = await this.links.claimScheduledVerification(intervalMs * DUE_SHARE);
    if (!recordId) return undefined;
    const report = await this.verifier.verify({
      from: 'last-verified',
      trigger: 'scheduled',
      recordId,
    });
    const summary = { links: report.links, from: report.from?.seq ?? null, head: report.head?.seq };
    if (report.ok) this.logger.info(summary, 'audit chain verified');
    else
      this.logger.error(
        { ...summary, firstBreak: report.firstBreak },
        'audit chain verification found a break',
      );
    return report;
  }
}
