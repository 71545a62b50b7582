import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { ProviderLedger } from '../provider-ledger/provider-ledger.service.js';
import { CardCustomersService } from './customers/card-customers.service.js';
import { CardNotificationsService } from './notifications/card-notifications.service.js';
import { CardPaymentsService } from './payments/card-payments.service.js';
import { CardRefundsService } from './refunds/card-refunds.service.js';
import { CardStore } from './store/card-store.service.js';
import { CardWalletsService } from './wallets/card-wallets.service.js';

/** Why an IRIS session or a wallet tokenisation whose creation answer was lost is failed. */
export const UNUSABLE_WITHOUT_ANSWER = 'resolver:unusable-without-answer';

/**
 * The card side of the resolver of writes in doubt (the ledger leases each row once the card deadline
 * has passed): payments found by their merchant_ref, captures by reading the payment, refunds among the
 * payment's, customers and notifications among the provider's by the fields Portico sent. IRIS sessions
 * and wallet tokenisations have no lookup, and what the provider may hold of them nobody can use
 * (docs/decisions.md): the payment form takes the session's signature, a charge the card token, both
 * only in the lost answer.
 */
@Injectable()
export class CardInDoubtResolver implements OnModuleInit {
  constructor(
    private readonly ledger: ProviderLedger,
    private readonly store: CardStore,
    private readonly payments: CardPaymentsService,
    private readonly refunds: CardRefundsService,
    private readonly customers: CardCustomersService,
    private readonly notifications: CardNotificationsService,
    private readonly wallets: CardWalletsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const deadlineMs = () => this.config.upstreams.card.http.deadlineMs;
    this.ledger.onInDoubt('card', deadlineMs, [
      this.store.inDoubt('payment', (row) => this.payments.settleInDoubt(row)),
      this.store.inDoubt('refund', (row) => this.refunds.settleInDoubt(row)),
      this.store.inDoubt('customer', (row) => this.customers.settleInDoubt(row, deadlineMs())),
      this.store.inDoubt('notification', (row) =>
        this.notifications.settleInDoubt(row, deadlineMs()),
      ),
      this.store.inDoubt('iris_session', (row) =>
        this.store.transition(row, 'failed', UNUSABLE_WITHOUT_ANSWER),
      ),
      this.store.inDoubt('wallet_token', (row) =>
        this.store.transition(row, 'failed', UNUSABLE_WITHOUT_ANSWER),
      ),
    ]);
    // A wallet's card token charged, its tokenisation left `verified` by a fault between the two writes.
    this.ledger.onMend('card wallets', () => this.wallets.mendCharged());
  }
}
