import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProviderSyncParts } from '#src/platform/provider-sync/provider-sync.js';
import { PosTransactionsService } from './pos-transactions.service.js';

/** An unacknowledging terminal may report late (after 10004); past this a transaction is the resolver's alone. */
const POS_SYNC_LIFETIME_MS = 86_400_000;

/**
 * A POS transaction whose terminal did not report within the provider's hold (10004), or whose answer
 * was lost, is `unknown` until read: it is read by its transaction_id until the provider has decided it,
 * so that the app hears the result by pos_transaction.status_changed without polling. A transaction
 * whose call is still under way (`creating`) is settled by that call.
 */
@Injectable()
export class PosTransactionSync implements OnModuleInit {
  constructor(
    private readonly parts: ProviderSyncParts,
    private readonly transactions: PosTransactionsService,
  ) {}

  onModuleInit(): void {
    this.parts.register({
      name: 'pos-transactions',
      pending: {
        table: 'provider_resources',
        kinds: ['pos_payment', 'pos_void'],
        statuses: ['unknown'],
        lifetimeMs: POS_SYNC_LIFETIME_MS,
      },
      refresh: (id) => this.transactions.refresh(id),
    });
  }
}
