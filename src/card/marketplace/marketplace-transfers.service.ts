import { Injectable } from '@nestjs/common';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { MarketplaceResources } from './marketplace-resources.js';

/** Splits of the tenant's payments to its sellers, the transfers' holds, and their reversals. */
@Injectable()
export class MarketplaceTransfersService {
  constructor(private readonly resources: MarketplaceResources) {}

  /** Splits a payment to a seller, exactly once; another tenant's payment is 404 before anything is sent. */
  async split(tenantId: string, paymentId: string, form: CardForm<'CreatePaymentTransferForm'>) {
    await this.resources.owned(tenantId, 'payment', paymentId);
    await this.resources.owned(tenantId, 'seller', form.seller);
    return this.resources.create(
      tenantId,
      'transfer',
      'createPaymentTransfer',
      (row) =>
        this.resources.store.call(
          tenantId,
          'createPaymentTransfer',
          { path: { paymentId }, form },
          row,
        ),
      { parentToken: paymentId, amount: form.amount },
    );
  }

  get(tenantId: string, transferId: string) {
    return this.resources.read(tenantId, 'transfer', transferId, (row) =>
      this.resources.store.call(tenantId, 'retrieveTransfer', { path: { transferId } }, row),
    );
  }

  update(tenantId: string, transferId: string, form: CardForm<'UpdateTransferForm'>) {
    return this.resources.change(tenantId, 'transfer', transferId, (row) =>
      this.resources.store.call(tenantId, 'updateTransfer', { path: { transferId }, form }, row),
    );
  }

  async list(tenantId: string, query: CardQueryOf<'listTransfers'>) {
    for (const [kind, name] of [
      ['payment', 'payment'],
      ['seller', 'seller'],
      ['payout', 'payout'],
    ] as const) {
      const token = query[name];
      if (typeof token === 'string') await this.resources.owned(tenantId, kind, token);
    }
    return this.resources.store.call(tenantId, 'listTransfers', { query });
  }

  async reverse(tenantId: string, form: CardForm<'CreateReversalForm'>) {
    await this.resources.owned(tenantId, 'transfer', form.transfer);
    return this.resources.create(
      tenantId,
      'reversal',
      'createReversal',
      (row) => this.resources.store.call(tenantId, 'createReversal', { form }, row),
      { parentToken: form.transfer, amount: form.amount },
    );
  }

  getReversal(tenantId: string, reversalId: string) {
    return this.resources.read(tenantId, 'reversal', reversalId, (row) =>
      this.resources.store.call(tenantId, 'retrieveReversal', { path: { reversalId } }, row),
    );
  }

  async listReversals(tenantId: string, query: CardQueryOf<'listReversals'>) {
    if (typeof query.transfer === 'string')
      await this.resources.owned(tenantId, 'transfer', query.transfer);
    if (typeof query.payout === 'string')
      await this.resources.owned(tenantId, 'payout', query.payout);
    return this.resources.store.call(tenantId, 'listReversals', { query });
  }
}
