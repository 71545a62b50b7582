import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LOGGER } from '../logging/logging.module.js';
import { Scheduler } from '../scheduler/scheduler.js';
import {
  DatabaseMaintenanceRepository,
  HOT_TABLES,
  type Maintenance,
} from './database-maintenance.repository.js';

/** On the embedded engine, every this many passes also vacuums (it has no autovacuum). */
export const VACUUM_EVERY_PASSES = 6;
/** A pass is due when the hot tables were last analysed this share of the interval ago (jitter aside). */
const DUE_SHARE = 0.9;

/**
 * Keeps the planner's statistics of the hot tables fresh: every DB_ANALYZE_INTERVAL_MS, one replica
 * (a session advisory lock, and a pass only when no replica analysed them within the interval) runs
 * ANALYZE on them. On the embedded engine, which has no autovacuum, every VACUUM_EVERY_PASSES-th pass
 * is VACUUM (ANALYZE), so that dead rows are reclaimed too.
 */
@Injectable()
export class DatabaseMaintenanceJob implements OnModuleInit {
  private passes = 0;
  private embedded?: Promise<boolean>;

  constructor(
    private readonly maintenance: DatabaseMaintenanceRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'db-analyze',
      intervalMs: this.config.database.analyzeIntervalMs,
      run: () => this.run(),
    });
  }

  /**
   * One pass: what it did, or `skipped` when another replica is at it or did it within `intervalMs`.
   */
  async run(intervalMs = this.config.database.analyzeIntervalMs): Promise<Maintenance | 'skipped'> {
    const embedded = await (this.embedded ??= this.maintenance.isEmbedded());
    const done = await this.maintenance.withLock(async (runner) => {
      if (!(await this.maintenance.analyzeDue(runner, intervalMs * DUE_SHARE))) return undefined;
      this.passes++;
      const what: Maintenance =
        embedded && this.passes % VACUUM_EVERY_PASSES === 0 ? 'vacuum' : 'analyze';
      const started = performance.now();
      await this.maintenance.maintain(runner, what);
      this.logger.debug(
        { tables: HOT_TABLES.length, what, ms: Math.round(performance.now() - started) },
        'hot tables maintained',
      );
      return what;
    });
    return done ?? 'skipped';
  }
}
