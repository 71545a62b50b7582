import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';
import { PosStore } from './store/pos-store.service.js';
import { PosTransactionsService } from './transactions/pos-transactions.service.js';

/**
 * The POS side of the resolver of writes in doubt: a transaction whose answer was lost, or whose
 * terminal had not reported, is read at the provider by its transaction_id once the POS deadline has
 * passed (no call of Portico's can still be in flight then).
 */
@Injectable()
export class PosInDoubtResolver implements OnModuleInit {
  constructor(
    private readonly settlers: InDoubtSettlers,
    private readonly store: PosStore,
    private readonly transactions: PosTransactionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.settlers.register({ name: 'pos', settle: () => this.resolveOnce() });
  }

  resolveOnce(olderThanMs = this.config.upstreams.pos.paymentDeadlineMs): Promise<number> {
    return this.store.settleInDoubt(olderThanMs, (row) => this.transactions.resolve(row));
  }
}
