import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { ProviderLedger } from '../provider-ledger/provider-ledger.service.js';
import { CardPaymentsService } from './payments/card-payments.service.js';
import { CardRefundsService } from './refunds/card-refunds.service.js';
import { CardStore } from './store/card-store.service.js';

/**
 * The card side of the resolver of writes in doubt (the ledger leases each row once the card deadline
 * has passed): payments found by their merchant_ref, captures by reading the payment, refunds among the
 * payment's.
 */
@Injectable()
export class CardInDoubtResolver implements OnModuleInit {
  constructor(
    private readonly ledger: ProviderLedger,
    private readonly store: CardStore,
    private readonly payments: CardPaymentsService,
    private readonly refunds: CardRefundsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.ledger.onInDoubt('card', () => this.config.upstreams.card.http.deadlineMs, [
      this.store.inDoubt('payment', (row) => this.payments.settleInDoubt(row)),
      this.store.inDoubt('refund', (row) => this.refunds.settleInDoubt(row)),
    ]);
  }
}
