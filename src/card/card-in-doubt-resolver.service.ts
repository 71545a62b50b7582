import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';
import { CardPaymentsService } from './payments/card-payments.service.js';
import { CardRefundsService } from './refunds/card-refunds.service.js';

/**
 * The card side of the resolver of writes in doubt (InDoubtResolver runs it, at start and periodically):
 * payments found by their merchant_ref, captures by reading the payment, refunds among the payment's.
 */
@Injectable()
export class CardInDoubtResolver implements OnModuleInit {
  constructor(
    private readonly settlers: InDoubtSettlers,
    private readonly payments: CardPaymentsService,
    private readonly refunds: CardRefundsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.settlers.register({ name: 'card', settle: () => this.resolveOnce() });
  }

  async resolveOnce(): Promise<number> {
    const olderThan = this.config.upstreams.card.http.deadlineMs;
    return (
      (await this.payments.resolveInDoubt(olderThan)) +
      (await this.refunds.resolveInDoubt(olderThan))
    );
  }
}
