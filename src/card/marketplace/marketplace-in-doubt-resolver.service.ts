import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { JsonObject } from '../../platform/common/json.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { APP_CONFIG } from '../../platform/config/config.module.js';
import { InDoubtSettlers } from '../../platform/in-doubt/in-doubt-settlers.js';
import type { CardResource } from '../store/card-resource.entity.js';
import { CardStore } from '../store/card-store.service.js';
import { statusOf } from './marketplace-resources.js';

/**
 * The marketplace's side of the resolver of writes in doubt: a transfer is looked for among its
 * payment's (or direct: its seller's) transfers, a reversal among its transfer's reversals: the newest
 * of the row's amount that no Portico row holds is it; none, it was not made (`failed`). A seller has
 * no such handle and stays in doubt (its key still never creates a second one), as a customer does.
 */
@Injectable()
export class MarketplaceInDoubtResolver implements OnModuleInit {
  constructor(
    private readonly settlers: InDoubtSettlers,
    private readonly store: CardStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.settlers.register({
      name: 'marketplace',
      settle: () => this.resolveInDoubt(this.config.upstreams.card.http.deadlineMs),
    });
  }

  async resolveInDoubt(olderThanMs: number): Promise<number> {
    const settle = (row: CardResource) => this.lookup(row);
    return (
      (await this.store.settleInDoubt('transfer', olderThanMs, settle)) +
      (await this.store.settleInDoubt('reversal', olderThanMs, settle))
    );
  }

  private async lookup(row: CardResource): Promise<void> {
    const parent = row.parentToken ?? '';
    const items: { token: string; amount: number }[] =
      row.kind === 'reversal'
        ? (
            await this.store.call(
              row.tenantId,
              'listReversals',
              { query: { transfer: parent, count: 20 } },
              row,
            )
          ).items
        : (
            await this.store.call(
              row.tenantId,
              'listTransfers',
              { query: { [parent.startsWith('sel_') ? 'seller' : 'payment']: parent, count: 20 } },
              row,
            )
          ).items;
    const found = await this.store.unclaimed(row, items);
    if (!found) {
      await this.store.transition(row, 'failed', 'resolver:not-at-provider');
      return;
    }
    const data: JsonObject = found;
    await this.store.settle(row, data, statusOf(row.kind as 'transfer', data), 'found-at-provider');
  }
}
