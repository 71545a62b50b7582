import { CardError, type CardContext } from '../card-context.js';
import type { PaymentRecord } from '../card-state.js';
import { post } from './ledger.js';
import { transferView } from './market-views.js';

/** Statuses in which a split payment's funds are held by the marketplace (captured, maybe refunded). */
const FUNDED = ['Captured', 'Partially Refunded', 'Refunded'];

/**
 * What a split payment still holds for transfers and refunds: its amount, less refunds, less what its
 * transfers took from it, plus what reversals gave back to it.
 */
export function paymentRemaining(context: CardContext, payment: PaymentRecord): number {
  if (!payment.split || !FUNDED.includes(payment.status)) return 0;
  let taken = 0;
  for (const transfer of context.book.transfers.values())
    if (transfer.payment === payment.token)
      taken += transfer.amount - transfer.additional - transfer.reversedToPayment;
  return payment.amount - payment.refundAmount - taken;
}

/** A split payment captured (at creation or later): its amount enters the marketplace's current balance. */
export function splitPaymentCaptured(context: CardContext, payment: PaymentRecord): void {
  if (payment.split && payment.status === 'Captured')
    post(context, `capture ${payment.token}`, [
      ['outside', -payment.amount],
      ['marketplace:current', payment.amount],
    ]);
}

/** A refund may take only what the split payment's transfers left (400 40017 otherwise). */
export function checkSplitRefund(context: CardContext, payment: PaymentRecord, amount: number) {
  if (!payment.split) return;
  const remaining = paymentRemaining(context, payment);
  if (amount > remaining) throw new CardError(400, 40017, remaining, payment.token);
}

/** A split payment refunded: the amount leaves the marketplace's current balance. */
export function splitPaymentRefunded(
  context: CardContext,
  payment: PaymentRecord,
  amount: number,
  refund: string,
): void {
  if (payment.split)
    post(context, `refund ${refund}`, [
      ['marketplace:current', -amount],
      ['outside', amount],
    ]);
}

/** A payment's transfers as card.yaml's Payment shows them. */
export function paymentTransfers(context: CardContext, payment: PaymentRecord) {
  const transfers = [...context.book.transfers.values()]
    .filter((transfer) => transfer.payment === payment.token)
    .sort((a, b) => a.seq - b.seq);
  return {
    transfer_amount: transfers.reduce((sum, t) => sum + t.amount - t.reversedAmount, 0),
    transfers: transfers.map((transfer) => transferView(context.book, transfer)),
  };
}
