import {
  CardError,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { knownPayment } from '../card-payments.js';
import { marketOf, post, sellerAvailable, sellerHeld } from './ledger.js';
import type { MerchantBook } from '../card-state.js';
import type {
  ReversalRecord,
  SellerRecord,
  TransferRecord,
  TransferType,
} from './market-records.js';
import { transferView } from './market-views.js';
import { knownSeller } from './sellers.js';
import { paymentRemaining } from './split-payments.js';

/** Statuses of a captured payment (rule 1: a Pre Authorized or Canceled payment cannot be split). */
const CAPTURED = ['Captured', 'Partially Refunded', 'Refunded'];

export function knownTransfer(context: CardContext, id: string): TransferRecord {
  const transfer = context.book.transfers.get(id);
  if (!transfer) throw new CardError(404, 60002, id);
  return transfer;
}

/** What a transfer gives the seller: a payment's amount less commission, a credit's, minus a debit's. */
export function transferNet(transfer: Pick<TransferRecord, 'type' | 'amount' | 'commission'>) {
  if (transfer.type === 'debit') return -transfer.amount;
  return transfer.amount - transfer.commission;
}

/** What a reversal took from its seller (a debit's reversal gives: negative). */
export function reversalNet(book: MerchantBook, reversal: ReversalRecord): number {
  const transfer = book.transfers.get(reversal.transfer);
  return transfer?.type === 'debit' ? -reversal.amount : reversal.amount - reversal.commission;
}

/** A payment transfer on hold and not paid out: its funds, and its reversals', are the seller's held balance. */
export const heldTransfer = (transfer: TransferRecord | undefined) =>
  transfer !== undefined && transfer.onHold && transfer.payout === null;

/** What of a transfer is still the seller's: its net less what its reversals took back. */
export function transferLeft(book: MerchantBook, transfer: TransferRecord): number {
  return transfer.reversals.reduce(
    (left, id) => left - reversalNet(book, book.reversals.get(id) as ReversalRecord),
    transferNet(transfer),
  );
}

function newTransfer(
  context: CardContext,
  seller: SellerRecord,
  fields: Pick<TransferRecord, 'type' | 'payment' | 'amount' | 'commission' | 'additional'> & {
    description: string;
    onHold: boolean;
  },
): TransferRecord {
  const transfer: TransferRecord = {
    token: newId('tra'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    seller: seller.token,
    payout: null,
    reversedAmount: 0,
    reversedCommission: 0,
    reversedToPayment: 0,
    reversals: [],
    ...fields,
  };
  context.state.put(context.book, 'transfer', transfer);
  return transfer;
}

/** Splits a captured split payment to a seller under the seed's seven rules (card.yaml). */
export function createPaymentTransfer(context: CardContext, request: CardRequest): CardAnswer {
  const payment = knownPayment(context, request.params.paymentId);
  const { body } = request;
  const seller = knownSeller(context, body.seller as string);
  const amount = body.amount as number;
  const commission = body.commission_amount as number;
  if (!CAPTURED.includes(payment.status))
    throw new CardError(400, 60010, payment.token, payment.status);
  if (payment.installments.length > 0) throw new CardError(400, 60011, payment.token);
  if (payment.status === 'Refunded') throw new CardError(400, 40006, payment.token);
  if (!payment.split) throw new CardError(400, 60012, payment.token);
  if (commission >= amount) throw new CardError(400, 60013);
  if (seller.status !== 'Authorized') throw new CardError(400, 60016, seller.token);
  const market = marketOf(context);
  const remaining = paymentRemaining(context, payment);
  const additional = Math.max(0, amount - remaining);
  if (additional > 0 && !market.transferAboveRemaining)
    throw new CardError(400, 60015, amount, payment.token);
  if (additional > market.available) throw new CardError(400, 60014, market.available, additional);

  const onHold = body.on_hold === 1;
  const transfer = newTransfer(context, seller, {
    type: 'payment',
    payment: payment.token,
    amount,
    commission,
    additional,
    description: body.description as string,
    onHold,
  });
  post(context, `transfer ${transfer.token}`, [
    ['marketplace:current', -(amount - additional)],
    ['marketplace:available', commission - additional],
    [onHold ? sellerHeld(seller.token) : sellerAvailable(seller.token), amount - commission],
  ]);
  return ok(transferView(context.book, transfer));
}

/** A direct transfer: credit from the marketplace's available balance, debit from the seller's. */
export function createSellerTransfer(context: CardContext, request: CardRequest): CardAnswer {
  const seller = knownSeller(context, request.params.sellerId);
  const { body } = request;
  const type = body.type as Exclude<TransferType, 'payment'>;
  const amount = body.amount as number;
  const market = marketOf(context);
  if (type === 'credit') {
    if (seller.status !== 'Authorized') throw new CardError(400, 60016, seller.token);
    if (amount > market.available) throw new CardError(400, 60014, market.available, amount);
  } else {
    if (seller.status === 'Closed') throw new CardError(400, 60016, seller.token);
    if (amount > seller.available)
      throw new CardError(400, 60017, seller.token, seller.available, amount);
  }
  const transfer = newTransfer(context, seller, {
    type,
    payment: null,
    amount,
    commission: 0,
    additional: 0,
    description: body.description as string,
    onHold: false,
  });
  const toSeller = type === 'credit' ? amount : -amount;
  post(context, `transfer ${transfer.token}`, [
    ['marketplace:available', -toSeller],
    [sellerAvailable(seller.token), toSeller],
  ]);
  return ok(transferView(context.book, transfer));
}

export function retrieveTransfer(context: CardContext, request: CardRequest): CardAnswer {
  return ok(transferView(context.book, knownTransfer(context, request.params.transferId)));
}

/** Description, and the hold of a payment transfer not paid out yet (card.yaml updateTransfer). */
export function updateTransfer(context: CardContext, request: CardRequest): CardAnswer {
  const transfer = knownTransfer(context, request.params.transferId);
  const { body } = request;
  if (body.on_hold !== undefined) {
    const hold = body.on_hold === 1;
    if (transfer.type !== 'payment') throw new CardError(400, 60019, transfer.token);
    if (hold && transfer.payout !== null) throw new CardError(400, 60018, transfer.token);
    if (hold !== transfer.onHold && transfer.payout === null) {
      const seller = context.book.sellers.get(transfer.seller) as SellerRecord;
      const net = transferLeft(context.book, transfer);
      if (hold && net > seller.available)
        throw new CardError(400, 60017, seller.token, seller.available, net);
      post(context, `${hold ? 'hold' : 'release'} ${transfer.token}`, [
        [sellerAvailable(seller.token), hold ? -net : net],
        [sellerHeld(seller.token), hold ? net : -net],
      ]);
      transfer.onHold = hold;
    }
  }
  if (body.description !== undefined) transfer.description = body.description as string;
  context.state.put(context.book, 'transfer', transfer);
  return ok(transferView(context.book, transfer));
}

export function listTransfers(context: CardContext, request: CardRequest): CardAnswer {
  const { query } = request;
  const paidOut = query.paid_out as number | undefined;
  const transfers = [...context.book.transfers.values()].filter(
    (transfer) =>
      (query.payment === undefined || transfer.payment === query.payment) &&
      (query.seller === undefined || transfer.seller === query.seller) &&
      (query.payout === undefined || transfer.payout === query.payout) &&
      (paidOut === undefined || (transfer.payout !== null) === (paidOut === 1)),
  );
  return page(transfers, query, (transfer) => transferView(context.book, transfer));
}
