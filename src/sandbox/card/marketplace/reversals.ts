import {
  CardError,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { marketOf, post, sellerAvailable, sellerHeld } from './ledger.js';
import type { ReversalRecord, SellerRecord, TransferRecord } from './market-records.js';
import { reversalView } from './market-views.js';
import { heldTransfer, knownTransfer, transferLeft } from './transfers.js';

/**
 * The commission a reversal gives back (card.yaml createReversal): an explicit commission_amount (at
 * most what remains, else 400 60022); none with refund_commission=0; all that remains when the
 * reversal completes the transfer; otherwise in proportion, rounded half up, capped at what remains.
 */
function commissionBack(transfer: TransferRecord, amount: number, body: Record<string, unknown>) {
  if (transfer.type !== 'payment') return 0;
  const left = transfer.commission - transfer.reversedCommission;
  const explicit = body.commission_amount as number | undefined;
  if (explicit !== undefined) {
    if (explicit > left) throw new CardError(400, 60022, explicit, transfer.token);
    return explicit;
  }
  if (body.refund_commission === 0) return 0;
  if (amount === transfer.amount - transfer.reversedAmount) return left;
  const share = Math.floor(
    (2 * transfer.commission * amount + transfer.amount) / (2 * transfer.amount),
  );
  return Math.min(share, left);
}

export function createReversal(context: CardContext, request: CardRequest): CardAnswer {
  const { body } = request;
  const transfer = knownTransfer(context, body.transfer as string);
  const remaining = transfer.amount - transfer.reversedAmount;
  if (remaining === 0) throw new CardError(400, 60020, transfer.token);
  const amount = (body.amount as number | undefined) ?? remaining;
  if (amount > remaining) throw new CardError(400, 60021, amount, transfer.token);
  const commission = commissionBack(transfer, amount, body);

  // What the seller gives back, and where it goes on the marketplace's side.
  const seller = context.book.sellers.get(transfer.seller) as SellerRecord;
  const fromSeller = transfer.type === 'debit' ? -amount : amount - commission;
  const toPayment =
    transfer.type === 'payment'
      ? Math.min(amount, transfer.amount - transfer.additional - transfer.reversedToPayment)
      : 0;
  const toAvailable = fromSeller - toPayment;
  // On hold (not paid out) its funds are still held: the reversal takes them back from there at once.
  const held = heldTransfer(transfer);
  const balance = held ? transferLeft(context.book, transfer) : seller.available;
  if (fromSeller > balance) throw new CardError(400, 60017, seller.token, balance, fromSeller);
  const market = marketOf(context);
  if (-toAvailable > market.available)
    throw new CardError(400, 60014, market.available, -toAvailable);

  const reversal: ReversalRecord = {
    token: newId('rev'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    description: (body.description as string | undefined) ?? '',
    amount,
    commission,
    transfer: transfer.token,
    toPayment,
    payout: null,
  };
  context.state.put(context.book, 'reversal', reversal);
  transfer.reversedAmount += amount;
  transfer.reversedCommission += commission;
  transfer.reversedToPayment += toPayment;
  transfer.reversals.push(reversal.token);
  context.state.put(context.book, 'transfer', transfer);
  post(context, `reversal ${reversal.token}`, [
    [held ? sellerHeld(seller.token) : sellerAvailable(seller.token), -fromSeller],
    ['marketplace:current', toPayment],
    ['marketplace:available', toAvailable],
  ]);
  return ok(reversalView(reversal));
}

export function retrieveReversal(context: CardContext, request: CardRequest): CardAnswer {
  const reversal = context.book.reversals.get(request.params.reversalId);
  if (!reversal) throw new CardError(404, 60003, request.params.reversalId);
  return ok(reversalView(reversal));
}

export function listReversals(context: CardContext, request: CardRequest): CardAnswer {
  const { query } = request;
  const paidOut = query.paid_out as number | undefined;
  const reversals = [...context.book.reversals.values()].filter(
    (reversal) =>
      (query.transfer === undefined || reversal.transfer === query.transfer) &&
      (query.payout === undefined || reversal.payout === query.payout) &&
      (paidOut === undefined || (reversal.payout !== null) === (paidOut === 1)),
  );
  return page(reversals, query, reversalView);
}
