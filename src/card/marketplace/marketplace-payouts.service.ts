import { Injectable } from '@nestjs/common';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import { MarketplaceResources } from './marketplace-resources.js';

/**
 * Payouts the provider's scheduler made to the tenant's sellers (each kept in Portico's store with
 * its Pending -> Deposited history when the tenant reads it) and the marketplace's balance.
 */
@Injectable()
export class MarketplacePayoutsService {
  constructor(private readonly resources: MarketplaceResources) {}

  get(tenantId: string, payoutId: string) {
    return this.resources.read(tenantId, 'payout', payoutId, (row) =>
      this.resources.store.call(tenantId, 'retrievePayout', { path: { payoutId } }, row),
    );
  }

  async list(tenantId: string, query: CardQueryOf<'listPayouts'>) {
    if (typeof query.seller === 'string')
      await this.resources.owned(tenantId, 'seller', query.seller);
    const page = await this.resources.store.call(tenantId, 'listPayouts', { query });
    await this.resources.keepAll(tenantId, 'payout', page.items);
    return page;
  }

  balance(tenantId: string) {
    return this.resources.store.call(tenantId, 'retrieveBalance', {});
  }
}
