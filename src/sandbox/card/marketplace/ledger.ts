import { CardError, type CardContext } from '../card-context.js';
import type { MerchantBook } from '../card-state.js';
import type { Account, MarketRecord, SellerRecord } from './market-records.js';

/** The merchant's marketplace record, made on first use. */
export function marketOf(context: CardContext): MarketRecord {
  const id = context.book.merchant.id;
  let market = context.book.markets.get(id);
  if (!market) {
    market = {
      token: id,
      merchantId: id,
      seq: context.state.nextSeq(),
      created: context.now.toISOString(),
      available: 0,
      current: 0,
      outside: 0,
      transferAboveRemaining: false,
      lastRunDay: null,
    };
    context.state.put(context.book, 'market', market);
  }
  return market;
}

export const sellerAvailable = (seller: string): Account => `seller:${seller}:available`;
export const sellerHeld = (seller: string): Account => `seller:${seller}:held`;

/** The balance an account holds now (its counter, kept with the entries). */
export function balanceOf(context: CardContext, account: Account): number {
  const market = marketOf(context);
  if (account === 'marketplace:available') return market.available;
  if (account === 'marketplace:current') return market.current;
  if (account === 'outside') return market.outside;
  const [, token, which] = account.split(':');
  const seller = context.book.sellers.get(token) as SellerRecord;
  return which === 'held' ? seller.held : seller.available;
}

/**
 * Posts one movement: its lines add up to 0 (money is moved, never made), and no balance but the
 * outside world's may end below 0. A refusal here is a bug of the caller, never a client's error.
 */
export function post(
  context: CardContext,
  movement: string,
  lines: readonly (readonly [Account, number])[],
): void {
  const moved = lines.filter(([, amount]) => amount !== 0);
  if (moved.reduce((sum, [, amount]) => sum + amount, 0) !== 0)
    throw new Error(`unbalanced movement ${movement}`);
  for (const [account, amount] of moved)
    if (account !== 'outside' && balanceOf(context, account) + amount < 0)
      throw new CardError(500, 99999);
  const market = marketOf(context);
  for (const [account, amount] of moved) {
    const seq = context.state.nextSeq();
    context.state.put(context.book, 'entry', {
      token: `ent_${seq}`,
      merchantId: market.merchantId,
      seq,
      created: context.now.toISOString(),
      movement,
      account,
      amount,
    });
    apply(context, market, account, amount);
  }
}

function apply(context: CardContext, market: MarketRecord, account: Account, amount: number) {
  if (account === 'marketplace:available') market.available += amount;
  else if (account === 'marketplace:current') market.current += amount;
  else if (account === 'outside') market.outside += amount;
  else {
    const [, token, which] = account.split(':');
    const seller = context.book.sellers.get(token) as SellerRecord;
    if (which === 'held') seller.held += amount;
    else seller.available += amount;
    context.state.put(context.book, 'seller', seller);
    return;
  }
  context.state.put(context.book, 'market', market);
}

/** The sum of the entries of each account of a merchant's marketplace. */
export function entrySums(book: MerchantBook): Map<Account, number> {
  const sums = new Map<Account, number>();
  for (const entry of book.entries.values())
    sums.set(entry.account, (sums.get(entry.account) ?? 0) + entry.amount);
  return sums;
}
