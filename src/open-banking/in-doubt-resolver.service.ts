import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { ConsentsService } from './consents/consents.service.js';
import { PaymentsService } from './payments/payments.service.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';

/**
 * Settles consents and payments (and, through InDoubtSettlers, the card API's writes) whose creation is in doubt (a timeout, a lost answer, a crash) with
 * the bank: at start (RECONCILE_ON_START) and every RESOLVER_INTERVAL_MS, only for rows older than the
 * upstream deadline, each row under a database lease so that N replicas never work the same one.
 */
@Injectable()
export class InDoubtResolver implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly consents: ConsentsService,
    private readonly payments: PaymentsService,
    private readonly settlers: InDoubtSettlers,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.reconcileOnStart) this.pass();
    const { intervalMs } = this.config.resolver;
    if (intervalMs > 0) {
      this.timer = setInterval(() => this.pass(), intervalMs);
      this.timer.unref();
    }
  }

  /** Starts a pass unless one runs; a finished pass (the one at start too) makes way for the next. */
  private pass(): void {
    this.running ??= this.resolveOnce().finally(() => (this.running = undefined));
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over the rows in doubt. */
  async resolveOnce(): Promise<void> {
    const olderThan = this.config.upstreams.openBanking.http.deadlineMs;
    const { giveUpAfterMs } = this.config.resolver;
    try {
      const consents = await this.consents.resolveInDoubt(olderThan, giveUpAfterMs);
      const payments = await this.payments.resolveInDoubt(olderThan, giveUpAfterMs);
      if (consents + payments > 0)
        this.logger.info({ consents, payments }, 'resolver worked consents and payments in doubt');
    } catch (error) {
      this.logger.error({ err: error }, 'resolver pass failed; the next pass tries again');
    }
    // The other upstreams' writes in doubt (the card API's), each on its own.
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
