import {
  CardError,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { marketOf, post, sellerAvailable } from './ledger.js';
import type { BankAccountRecord, PayoutRecord, SellerRecord } from './market-records.js';
import { payoutView } from './market-views.js';
import { verifyBankAccounts, WEEKDAYS } from './sellers.js';
import { heldTransfer } from './transfers.js';

/** Whether a seller's schedule pays on a day (UTC): monthly days 29-31 fall on the last day of shorter months. */
export function isPayoutDay(seller: SellerRecord, day: string): boolean {
  if (seller.payoutInterval === 'daily') return true;
  const date = new Date(`${day}T00:00:00Z`);
  if (seller.payoutInterval === 'weekly')
    return seller.payoutFrequency.includes(WEEKDAYS[date.getUTCDay() - 1] ?? '');
  const dayOfMonth = date.getUTCDate();
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  return seller.payoutFrequency.some(
    (listed) =>
      Number(listed) === dayOfMonth || (dayOfMonth === lastDay && Number(listed) > lastDay),
  );
}

/** One payout of all the seller's available balance: its transfers not held and reversals not paid out. */
function payOut(context: CardContext, seller: SellerRecord, day: string): PayoutRecord {
  const transfers = [...context.book.transfers.values()].filter(
    (t) => t.seller === seller.token && t.payout === null && !t.onHold,
  );
  // A held transfer's reversals came out of its held funds: they are paid out with it.
  const reversals = [...context.book.reversals.values()].filter(
    (r) =>
      r.payout === null &&
      context.book.transfers.get(r.transfer)?.seller === seller.token &&
      !heldTransfer(context.book.transfers.get(r.transfer)),
  );
  const sign = (type: string) => (type === 'debit' ? -1 : 1);
  const transferAmount = transfers.reduce((sum, t) => sum + sign(t.type) * t.amount, 0);
  const commission = transfers.reduce((sum, t) => sum + t.commission, 0);
  const reversalAmount = reversals.reduce(
    (sum, r) => sum + sign(context.book.transfers.get(r.transfer)?.type ?? '') * r.amount,
    0,
  );
  const reversedCommission = reversals.reduce((sum, r) => sum + r.commission, 0);
  const amount = transferAmount - commission - reversalAmount + reversedCommission;
  if (amount !== seller.available) throw new Error(`payout of ${seller.token} does not add up`);
  const payout: PayoutRecord = {
    token: newId('pay'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    day,
    seller: seller.token,
    amount,
    status: 'Pending',
    deposited: null,
    bankAccount: { ...(seller.bankAccounts.find((a) => a.isDefault) as BankAccountRecord) },
    statement: `PAYOUT ${day}`,
    transferAmount,
    reversalAmount,
    commission,
    reversedCommission,
    transferCount: transfers.length,
    reversalCount: reversals.length,
  };
  context.state.put(context.book, 'payout', payout);
  for (const item of transfers) {
    item.payout = payout.token;
    context.state.put(context.book, 'transfer', item);
  }
  for (const item of reversals) {
    item.payout = payout.token;
    context.state.put(context.book, 'reversal', item);
  }
  seller.lastPayoutDay = day;
  post(context, `payout ${payout.token}`, [
    [sellerAvailable(seller.token), -amount],
    ['outside', amount],
  ]);
  return payout;
}

/**
 * The scheduler's run for one day of one marketplace (card.yaml, Marketplace tag): deposits the
 * payouts of earlier days, then pays out every seller due that day whose balance exceeds its threshold.
 */
export function runPayouts(
  context: CardContext,
  day: string,
): { deposited: string[]; created: string[] } {
  const deposited: string[] = [];
  for (const payout of context.book.payouts.values())
    if (payout.status === 'Pending' && payout.day < day) {
      payout.status = 'Deposited';
      payout.deposited = context.now.toISOString();
      context.state.put(context.book, 'payout', payout);
      deposited.push(payout.token);
    }
  const created: string[] = [];
  const sellers = [...context.book.sellers.values()].sort((a, b) => a.seq - b.seq);
  for (const seller of sellers) {
    verifyBankAccounts(context, seller);
    if (
      seller.status === 'Authorized' &&
      !seller.payoutsOnHold &&
      seller.lastPayoutDay !== day &&
      seller.available > seller.threshold &&
      isPayoutDay(seller, day)
    )
      created.push(payOut(context, seller, day).token);
  }
  const market = marketOf(context);
  market.lastRunDay = day;
  context.state.put(context.book, 'market', market);
  return { deposited, created };
}

export function retrievePayout(context: CardContext, request: CardRequest): CardAnswer {
  const payout = context.book.payouts.get(request.params.payoutId);
  if (!payout) throw new CardError(404, 60004, request.params.payoutId);
  return ok(payoutView(payout));
}

export function listPayouts(context: CardContext, request: CardRequest): CardAnswer {
  const { query } = request;
  const deposited = query.is_deposited as number | undefined;
  const payouts = [...context.book.payouts.values()].filter(
    (payout) =>
      (query.seller === undefined || payout.seller === query.seller) &&
      (deposited === undefined || (payout.status === 'Deposited') === (deposited === 1)),
  );
  return page(payouts, query, payoutView);
}
