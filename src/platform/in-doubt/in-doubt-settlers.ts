import { Global, Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LOGGER } from '../logging/logging.module.js';
import { Scheduler } from '../scheduler/scheduler.js';

/** A capability's writes in doubt, settled with its provider by the one resolver (see InDoubtResolver). */
export interface InDoubtSettler {
  /** For the resolver's log line: `card`. */
  name: string;
  /** One pass over its rows in doubt (each under a lease); answers how many it worked. */
  settle(): Promise<number>;
}

/** Where each capability (open banking, card, marketplace, POS) registers the settling of its writes in doubt. */
@Injectable()
export class InDoubtSettlers {
  private readonly settlers: InDoubtSettler[] = [];

  register(settler: InDoubtSettler): void {
    this.settlers.push(settler);
  }

  all(): readonly InDoubtSettler[] {
    return this.settlers;
  }
}

/**
 * Settles every capability's writes in doubt (a timeout, a lost answer, a crash) with its provider:
 * at start (RECONCILE_ON_START) and every RESOLVER_INTERVAL_MS, on the shared scheduler. Each settler
 * works its rows under database leases, so that N replicas never work the same one; one settler's
 * failure does not keep the others from their pass.
 */
@Injectable()
export class InDoubtResolver implements OnModuleInit {
  constructor(
    private readonly settlers: InDoubtSettlers,
    private readonly scheduler: Scheduler,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'resolver',
      intervalMs: this.config.resolver.intervalMs,
      runAtStart: this.config.reconcileOnStart,
      run: () => this.resolveOnce(),
    });
  }

  /** One pass over every capability's rows in doubt. */
  async resolveOnce(): Promise<void> {
    for (const settler of this.settlers.all()) {
      try {
        const worked = await settler.settle();
        if (worked > 0)
          this.logger.info({ upstream: settler.name, worked }, 'resolver worked writes in doubt');
      } catch (error) {
        this.logger.error(
          { err: error, upstream: settler.name },
          'resolver pass failed; the next pass tries again',
        );
      }
    }
  }
}

@Global()
@Module({
  providers: [InDoubtSettlers, InDoubtResolver],
  exports: [InDoubtSettlers, InDoubtResolver],
})
export class InDoubtModule {}
