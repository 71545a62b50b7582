import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { settleLostCreation } from '../store/lost-creation.js';
import { statusOf } from './marketplace-resources.js';
import { sellerMatches } from './seller-match.js';

/**
 * The marketplace's side of the resolver of writes in doubt: a transfer is looked for among its
 * payment's (or direct: its seller's) transfers, a reversal among its transfer's reversals: the newest
 * of the row's amount that no Portico row holds is it; none, it was not made (`failed`). A seller is
 * looked for among the provider's sellers of its creation days by the fingerprint of what was sent (its
 * e-mail, tax number and IBAN: seller-match.ts), as a customer is.
 */
@Injectable()
export class MarketplaceInDoubtResolver implements OnModuleInit {
  private readonly kinds = [
    this.store.inDoubt('seller', (row) =>
      settleLostCreation(this.store, row, this.config.upstreams.card.http.deadlineMs, {
        list: (query) => this.store.call(row.tenantId, 'listSellers', { query }, row),
        matches: sellerMatches,
        statusOf: (seller) => statusOf('seller', seller),
      }),
    ),
    this.store.inDoubt('transfer', (row) => this.settleTransfer(row)),
    this.store.inDoubt('reversal', (row) => this.settleReversal(row)),
  ];

  constructor(
    private readonly ledger: ProviderLedger,
    private readonly store: CardStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.ledger.onInDoubt(
      'marketplace',
      () => this.config.upstreams.card.http.deadlineMs,
      this.kinds,
    );
  }

  /** One pass over the marketplace's rows in doubt older than `olderThanMs`. */
  resolveInDoubt(olderThanMs: number): Promise<number> {
    return this.ledger.settleInDoubt(this.kinds, olderThanMs);
  }

  private async settleTransfer(row: CardRow<'transfer'>): Promise<void> {
    const parent = row.parentToken ?? '';
    const { items } = await this.store.call(
      row.tenantId,
      'listTransfers',
      { query: { [parent.startsWith('sel_') ? 'seller' : 'payment']: parent, count: 20 } },
      row,
    );
    const found = await this.store.unclaimed(row, items);
    if (found)
      await this.store.settle(row, found, statusOf('transfer', found), 'found-at-provider');
    else await this.store.transition(row, 'failed', 'resolver:not-at-provider');
  }

  private async settleReversal(row: CardRow<'reversal'>): Promise<void> {
    const { items } = await this.store.call(
      row.tenantId,
      'listReversals',
      { query: { transfer: row.parentToken ?? '', count: 20 } },
      row,
    );
    const found = await this.store.unclaimed(row, items);
    if (found)
      await this.store.settle(row, found, statusOf('reversal', found), 'found-at-provider');
    else await this.store.transition(row, 'failed', 'resolver:not-at-provider');
  }
}
