import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { AuditChainRepository } from './audit-chain.repository.js';

export interface RetentionCutResult {
  seq: string;
  chainHash: string;
  rowsRemoved: number;
  removedBefore: Date;
}

const DAY_MS = 86_400_000;

/**
 * Removes the trail older than AUDIT_RETENTION_DAYS without breaking verification: it cuts the chain at
 * the newest signed checkpoint whose links all seal rows older than the period (so the cut's link hash
 * is one an auditor holds a signature for), removes those links and rows, and records the cut; the
 * verifier then starts from the cut's hash. Without a checkpoint old enough nothing is removed. Runs
 * under the sealer's lock, so it never races a sealer on another replica.
 */
@Injectable()
export class AuditRetentionService implements OnModuleInit {
  constructor(
    private readonly links: AuditChainRepository,
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
        const cut = await this.cut();
        if (cut) this.logger.info({ ...cut }, 'audit retention: removed the trail before a cut');
      },
    });
  }

  async cut(now = new Date()): Promise<RetentionCutResult | undefined> {
    const { retentionDays } = this.config.audit;
    if (retentionDays === 0) return undefined;
    const removedBefore = new Date(now.getTime() - retentionDays * DAY_MS);
    return this.links.transaction(async (manager) => {
      await this.links.lockSealer(manager, true);
      // The first link that seals a row still inside the period: everything before it may go.
      const keep = await this.links.firstLinkSince(manager, removedBefore);
      const checkpoint = await this.links.checkpointToCutAt(manager, keep);
      if (!checkpoint) return undefined;
      const rowsRemoved = await this.links.removeThrough(manager, checkpoint.seq);
      const cut = {
        seq: checkpoint.seq,
        chainHash: checkpoint.chain_hash,
        removedBefore,
        rowsRemoved,
      };
      await this.links.recordCut(manager, cut);
      return { ...cut, seq: String(checkpoint.seq) };
    });
  }
}
