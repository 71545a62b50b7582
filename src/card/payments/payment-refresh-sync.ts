import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProviderSyncParts } from '#src/platform/provider-sync/provider-sync.js';
import { CardStore } from '../store/card-store.service.js';
import { CardPaymentsService } from './card-payments.service.js';

/**
 * When a payment owed a read is read: after the deadline of the call that changed it (a refund answered
 * late or lost is settled by then), so that one read sees the change.
 */
export const PAYMENT_READ_OWED_AFTER_MS = 30_000;

/** The statuses a refund moves a payment from: read while owed and in one of them. */
const REFUNDABLE = ['Captured', 'Partially Refunded'];

/**
 * A refund changes its payment (`Partially Refunded`, `Refunded`) and the provider tells no one: the
 * refund's own read of the payment can fail, or the refund's answer be lost and the refund settled
 * later by the resolver. Each refund marks its payment owed a read before it is sent (CardStore.oweRead);
 * this part reads it once the refund's outcome is known, until one read succeeds.
 */
@Injectable()
export class PaymentRefreshSync implements OnModuleInit {
  constructor(
    private readonly parts: ProviderSyncParts,
    private readonly store: CardStore,
    private readonly payments: CardPaymentsService,
  ) {}

  onModuleInit(): void {
    this.parts.register({
      name: 'payments-after-refund',
      pending: {
        table: 'provider_resources',
        kinds: ['payment'],
        statuses: REFUNDABLE,
        // A refund is possible for as long as the provider keeps the payment refundable; the mark bounds it.
        lifetimeMs: 10 * 365 * 86_400_000,
        whenOwed: true,
      },
      refresh: async (id) => {
        const row = await this.store.row('payment', id);
        if (row?.token) await this.payments.read(row.tenantId, row.token, 'refunded');
      },
    });
  }
}
