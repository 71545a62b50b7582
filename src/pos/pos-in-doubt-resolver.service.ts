import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { ProviderLedger } from '../provider-ledger/provider-ledger.service.js';
import { PosStore } from './store/pos-store.service.js';
import { PosTransactionsService } from './transactions/pos-transactions.service.js';

/**
 * The POS side of the resolver of writes in doubt: a transaction whose answer was lost, or whose
 * terminal had not reported, is read at the provider by its transaction_id once the POS deadline has
 * passed (no call of Portico's can still be in flight then); the ledger leases each row.
 */
@Injectable()
export class PosInDoubtResolver implements OnModuleInit {
  private readonly kinds;

  constructor(
    private readonly ledger: ProviderLedger,
    store: PosStore,
    transactions: PosTransactionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.kinds = store.inDoubtKinds((row) => transactions.resolve(row));
  }

  onModuleInit(): void {
    this.ledger.onInDoubt('pos', () => this.config.upstreams.pos.paymentDeadlineMs, this.kinds);
  }

  resolveOnce(olderThanMs = this.config.upstreams.pos.paymentDeadlineMs): Promise<number> {
    return this.ledger.settleInDoubt(this.kinds, olderThanMs);
  }
}
