import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { isUuid } from '#src/shared/uuid.js';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardPaymentsService } from '../payments/card-payments.service.js';
import { PAYMENT_READ_OWED_AFTER_MS } from '../payments/payment-read-owed.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { REFUND_FAILED, refundFailedProblem } from './refund-failed.js';

export type ProviderRefund = components['schemas']['Refund'];

/**
 * Refunds of the tenant's payments: stored before the provider is called and bound to the
 * Idempotency-Key, so that one key never refunds twice. A refund whose answer is lost is settled from
 * the payment's refunds at the provider (the one of that amount no Portico row holds).
 */
@Injectable()
export class CardRefundsService {
  constructor(
    private readonly store: CardStore,
    private readonly payments: CardPaymentsService,
  ) {}

  async create(tenantId: string, form: CardForm<'CreateRefundForm'>): Promise<ProviderRefund> {
    const paymentToken = form.payment;
    // Another tenant's payment is 404 before anything is written or sent (one Portico does not know
    // is the provider's to judge: it answers 404 for a payment of another merchant).
    const payment = await this.store.owned(tenantId, 'payment', paymentToken);
    // The payment changes with the refund: read once its outcome is known, whatever becomes of this call.
    if (payment) await this.store.oweRead(payment, PAYMENT_READ_OWED_AFTER_MS);
    const row = await this.store.begin(
      tenantId,
      'refund',
      { parentToken: paymentToken, amount: form.amount ?? null },
      { operation: 'createRefund', resource: (refundId) => `/v1/card/refunds/${refundId}` },
    );
    return this.store.create(row, {
      names: () => ({ refundId: row.id }),
      send: () => this.store.call(tenantId, 'createRefund', { form }, row),
      settle: async (refund) => {
        await this.store.settle(row, refund, refund.status, 'upstream-created');
        await this.refreshPayment(tenantId, paymentToken);
      },
      lookup: async () => {
        const found = await this.lookup(row).catch(() => undefined);
        await this.refreshPayment(tenantId, paymentToken);
        // The refund-failing test cards answer 5xx and record a Failed refund.
        if (found?.status === REFUND_FAILED) throw refundFailedProblem(row);
        return found;
      },
    });
  }

  async get(tenantId: string, id: string): Promise<ProviderRefund> {
    if (isUuid(id)) {
      const row = await this.store.byId(tenantId, 'refund', id);
      if (!row.data) throw this.store.notKnownYet('refund', row);
      return row.data;
    }
    const row = await this.store.owned(tenantId, 'refund', id);
    const refund = await this.store.call(
      tenantId,
      'retrieveRefund',
      { path: { refundId: id } },
      row,
    );
    if (!row)
      await this.store.adopt(tenantId, 'refund', refund, refund.status, {
        parentToken: refund.payment ?? null,
      });
    return refund;
  }

  async list(tenantId: string, query: CardQueryOf<'listRefunds'>) {
    if (typeof query.payment === 'string')
      await this.store.owned(tenantId, 'payment', query.payment);
    return this.store.call(tenantId, 'listRefunds', { query });
  }

  /** Settles one refund in doubt (the resolver): among its payment's refunds. */
  settleInDoubt(row: CardRow<'refund'>): Promise<unknown> {
    return this.lookup(row);
  }

  /**
   * The refund of this row at the provider: among the payment's refunds, the newest one of the row's
   * amount (any, when the row has none) that no Portico row holds. null when there is none.
   */
  private async lookup(row: CardRow<'refund'>): Promise<ProviderRefund | null> {
    const page = await this.store.call(
      row.tenantId,
      'listRefunds',
      { query: { payment: row.parentToken ?? undefined, count: 20 } },
      row,
    );
    const refund = await this.store.unclaimed(row, page.items);
    if (!refund) {
      await this.store.transition(row, 'failed', 'not-at-provider');
      return null;
    }
    await this.store.settle(row, refund, refund.status, 'found-at-provider');
    return refund;
  }

  private async refreshPayment(tenantId: string, token: string): Promise<void> {
    await this.payments.read(tenantId, token, 'refunded').catch(() => undefined);
  }
}
