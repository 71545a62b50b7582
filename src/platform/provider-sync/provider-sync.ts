import { Global, Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LOGGER } from '../logging/logging.module.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { claimDue, scheduleNext, settleOwed, type PendingRows } from './provider-sync-lease.js';

/**
 * A capability's resources whose status the provider never pushes (notifications, IRIS sessions, POS
 * transactions in doubt): which rows are pending, and how to bring one up to date.
 */
export interface ProviderSyncPart {
  /** For logs: `notifications`. */
  name: string;
  pending: PendingRows;
  /**
   * Reads the resource (at the provider where it can be read) and records its transition as a facade
   * GET does: status history, audit trail, webhook event.
   */
  refresh(id: string): Promise<void>;
}

/** Rows read at once by a replica (each read bounded by the read deadline, all within the lease). */
const BATCH = 10;

/** Where each capability registers its part of the sync. */
@Injectable()
export class ProviderSyncParts {
  private readonly parts: ProviderSyncPart[] = [];

  register(part: ProviderSyncPart): void {
    this.parts.push(part);
  }

  all(): readonly ProviderSyncPart[] {
    return this.parts;
  }
}

/**
 * Keeps pending resources in step with the provider: every PROVIDER_SYNC_INTERVAL_MS, on the shared
 * scheduler, each part's due rows are claimed under a lease in the database (N replicas never read the
 * same row at once), refreshed, and given their next read by their age, until they are final or past
 * their lifetime. A failed read is tried again at the row's next turn.
 */
@Injectable()
export class ProviderSync implements OnModuleInit {
  constructor(
    private readonly parts: ProviderSyncParts,
    private readonly scheduler: Scheduler,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'provider-sync',
      intervalMs: this.config.providerSync.intervalMs,
      run: () => this.syncOnce(),
    });
  }

  /** One turn: every due row of every part, read once. Answers how many were read. */
  async syncOnce(): Promise<number> {
    let read = 0;
    for (const part of this.parts.all()) {
      try {
        read += await this.syncPart(part);
      } catch (error) {
        this.logger.error({ err: error, part: part.name }, 'provider sync turn failed');
      }
    }
    return read;
  }

  private async syncPart(part: ProviderSyncPart): Promise<number> {
    const { manager } = this.dataSource;
    // A row whose interval is 0 (the job run by hand) is due at once.
    const intervalMs = Math.max(this.config.providerSync.intervalMs, 1);
    let read = 0;
    for (;;) {
      const claimed = await claimDue(manager, part.pending, intervalMs, BATCH);
      if (claimed.length === 0) return read;
      read += claimed.length;
      await Promise.all(
        claimed.map(async (row) => {
          const { id } = row;
          try {
            await part.refresh(id);
            if (part.pending.whenOwed) return await settleOwed(manager, part.pending.table, row);
          } catch (error) {
            this.logger.warn(
              { err: error, part: part.name, cardResourceId: id },
              'provider sync could not read a pending resource; it is read again at its next turn',
            );
          }
          await scheduleNext(manager, part.pending.table, id, intervalMs);
        }),
      );
    }
  }
}

@Global()
@Module({
  providers: [ProviderSyncParts, ProviderSync],
  exports: [ProviderSyncParts, ProviderSync],
})
export class ProviderSyncModule {}
