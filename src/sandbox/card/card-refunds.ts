import {
  CardError,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from './card-context.js';
import { fullyRefunded } from './answer-style.js';
import { knownPayment, viewPayment } from './card-payments.js';
import type { PaymentRecord, RefundRecord } from './card-state.js';
import { refundView } from './card-views.js';
import { checkSplitRefund, splitPaymentRefunded } from './marketplace/split-payments.js';

/** The fee a refund gives back: in proportion, the last one taking what remains of the payment's fee. */
function refundedFee(context: CardContext, payment: PaymentRecord, amount: number): number {
  const given = payment.refunds.reduce(
    (sum, id) => sum + (context.book.refunds.get(id)?.fee ?? 0),
    0,
  );
  if (payment.refundAmount + amount === payment.amount) return payment.fee - given;
  const share = Math.floor((2 * payment.fee * amount + payment.amount) / (2 * payment.amount));
  return Math.min(share, payment.fee - given);
}

/**
 * Refunds a Captured or Partially Refunded payment: omitted amount = the remainder; fully refunded
 * 400 40006; above the remainder 400 40007; another status 400 40015. A refund of the refund-failing
 * test cards is recorded Failed and answered 500/502.
 */
function refund(
  context: CardContext,
  paymentId: string,
  body: Record<string, unknown>,
): CardAnswer {
  const payment = knownPayment(context, paymentId);
  if (payment.status === 'Refunded') throw fullyRefunded(context, payment.token);
  if (payment.status !== 'Captured' && payment.status !== 'Partially Refunded')
    throw new CardError(400, 40015, payment.token, payment.status);
  const remaining = payment.amount - payment.refundAmount;
  const amount = (body.amount as number | undefined) ?? remaining;
  if (amount > remaining) throw new CardError(400, 40007, amount, payment.token);
  checkSplitRefund(context, payment, amount);
  const failure = payment.card?.refund ?? 'ok';
  const record: RefundRecord = {
    token: newId('ref'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    status: failure === 'ok' ? 'Captured' : 'Failed',
    amount,
    fee: failure === 'ok' ? refundedFee(context, payment, amount) : 0,
    description: (body.description as string | undefined) ?? '',
    metadata: { ...((body.metadata as Record<string, string> | undefined) ?? {}) },
    payment: payment.token,
  };
  context.state.put(context.book, 'refund', record);
  if (failure === 'error-500') throw new CardError(500, 99999);
  if (failure === 'error-502') throw new CardError(502, 40013);
  payment.refundAmount += amount;
  payment.refunds.push(record.token);
  payment.status = payment.refundAmount === payment.amount ? 'Refunded' : 'Partially Refunded';
  context.state.put(context.book, 'payment', payment);
  splitPaymentRefunded(context, payment, amount, record.token);
  return ok(refundView(record));
}

export function createRefund(context: CardContext, request: CardRequest): CardAnswer {
  return refund(context, request.body.payment as string, request.body);
}

/** The clients' refund path answers the payment after the refund (provider facts), not the refund. */
export function refundPaymentAlias(context: CardContext, request: CardRequest): CardAnswer {
  refund(context, request.params.paymentId, request.body);
  return ok(viewPayment(context, knownPayment(context, request.params.paymentId)));
}

export function retrieveRefund(context: CardContext, request: CardRequest): CardAnswer {
  const record = context.book.refunds.get(request.params.refundId);
  if (!record) throw new CardError(404, 50003, request.params.refundId);
  return ok(refundView(record));
}

export function listRefunds(context: CardContext, request: CardRequest): CardAnswer {
  const payment = request.query.payment as string | undefined;
  const refunds = [...context.book.refunds.values()].filter(
    (record) => payment === undefined || record.payment === payment,
  );
  return page(refunds, request.query, refundView);
}
