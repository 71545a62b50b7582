import { sentSellerFingerprint } from './seller-match.js';
import { Injectable } from '@nestjs/common';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { MarketplaceResources } from './marketplace-resources.js';

/** The tenant's sellers (its marketplace = its merchant at the provider), their balances and direct transfers. */
@Injectable()
export class MarketplaceSellersService {
  constructor(private readonly resources: MarketplaceResources) {}

  create(tenantId: string, form: CardForm<'CreateSellerForm'>) {
    // The fingerprint by which the resolver finds the seller when the answer is lost (parentToken).
    return this.resources.create(
      tenantId,
      'seller',
      'createSeller',
      (row) => this.resources.store.call(tenantId, 'createSeller', { form }, row),
      { parentToken: sentSellerFingerprint(form) },
    );
  }

  get(tenantId: string, sellerId: string) {
    return this.resources.read(tenantId, 'seller', sellerId, (row) =>
      this.resources.store.call(tenantId, 'retrieveSeller', { path: { sellerId } }, row),
    );
  }

  update(tenantId: string, sellerId: string, form: CardForm<'UpdateSellerForm'>) {
    return this.resources.change(tenantId, 'seller', sellerId, (row) =>
      this.resources.store.call(tenantId, 'updateSeller', { path: { sellerId }, form }, row),
    );
  }

  list(tenantId: string, query: CardQueryOf<'listSellers'>) {
    return this.resources.store.call(tenantId, 'listSellers', { query });
  }

  async balance(tenantId: string, sellerId: string) {
    const row = await this.resources.store.owned(tenantId, 'seller', sellerId);
    return this.resources.store.call(
      tenantId,
      'retrieveSellerBalance',
      { path: { sellerId } },
      row,
    );
  }

  /** A direct credit (marketplace to seller) or debit (seller to marketplace), exactly once. */
  async transfer(tenantId: string, sellerId: string, form: CardForm<'CreateSellerTransferForm'>) {
    await this.resources.owned(tenantId, 'seller', sellerId);
    return this.resources.create(
      tenantId,
      'transfer',
      'createSellerTransfer',
      (row) =>
        this.resources.store.call(
          tenantId,
          'createSellerTransfer',
          { path: { sellerId }, form },
          row,
        ),
      { parentToken: sellerId, amount: form.amount },
    );
  }
}
