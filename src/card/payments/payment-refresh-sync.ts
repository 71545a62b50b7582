import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProviderSyncParts } from '#src/platform/provider-sync/provider-sync.js';
import { CardStore } from '../store/card-store.service.js';
import { CardPaymentsService } from './card-payments.service.js';

/** The statuses a capture or a refund moves a payment from: read while owed and in one of them. */
const CHANGEABLE = ['Pre Authorized', 'Captured', 'Partially Refunded'];

/**
 * A capture or a refund changes a payment, and Portico may not record it: the refund's own read of the
 * payment can fail, a refund's answer be lost and the refund settled later by the resolver, a capture's
 * answer arrive while the database is away. Each marks its payment owed a read before it is sent
 * (CardStore.oweRead); this part reads it once the call's outcome is known, until one read succeeds.
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
      name: 'payments-owed-a-read',
      pending: {
        table: 'provider_resources',
        kinds: ['payment'],
        statuses: CHANGEABLE,
        // Read only while owed: the mark, not an age, bounds the reads.
        lifetimeMs: 10 * 365 * 86_400_000,
        whenOwed: true,
      },
      refresh: async (id) => {
        const row = await this.store.row('payment', id);
        if (row?.token)
          await this.payments.read(row.tenantId, row.token, 'provider-sync:read-owed');
      },
    });
  }
}
