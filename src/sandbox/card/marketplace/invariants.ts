import type { CardContext } from '../card-context.js';
import { entrySums, marketOf, sellerAvailable, sellerHeld } from './ledger.js';
import type { Account } from './market-records.js';
import { paymentRemaining } from './split-payments.js';
import { heldTransfer, reversalNet, transferLeft, transferNet } from './transfers.js';

/**
 * The ledger's invariants for one marketplace, as a list of what is broken (empty when sound): every
 * movement adds up to 0, every balance is the sum of its entries and is never negative, and every
 * balance equals what the resources (payments, transfers, reversals, payouts) say it should be.
 */
export function ledgerViolations(context: CardContext): string[] {
  const { book } = context;
  const broken: string[] = [];
  const expect = (what: string, actual: number, expected: number) => {
    if (actual !== expected) broken.push(`${what}: ${actual}, expected ${expected}`);
  };
  const market = marketOf(context);
  const sums = entrySums(book);
  const sumOf = (account: Account) => sums.get(account) ?? 0;

  const movements = new Map<string, number>();
  for (const entry of book.entries.values())
    movements.set(entry.movement, (movements.get(entry.movement) ?? 0) + entry.amount);
  for (const [movement, total] of movements) expect(`movement ${movement} total`, total, 0);

  expect('marketplace available vs entries', market.available, sumOf('marketplace:available'));
  expect('marketplace current vs entries', market.current, sumOf('marketplace:current'));
  expect('outside vs entries', market.outside, sumOf('outside'));
  let sellersTotal = 0;
  for (const seller of book.sellers.values()) {
    expect(
      `${seller.token} available vs entries`,
      seller.available,
      sumOf(sellerAvailable(seller.token)),
    );
    expect(`${seller.token} held vs entries`, seller.held, sumOf(sellerHeld(seller.token)));
    if (seller.available < 0) broken.push(`${seller.token} available negative`);
    if (seller.held < 0) broken.push(`${seller.token} held negative`);
    sellersTotal += seller.available + seller.held;
    const transfers = [...book.transfers.values()].filter((t) => t.seller === seller.token);
    const unpaid = transfers.filter((t) => t.payout === null);
    const reversals = [...book.reversals.values()].filter(
      (r) =>
        r.payout === null &&
        book.transfers.get(r.transfer)?.seller === seller.token &&
        !heldTransfer(book.transfers.get(r.transfer)),
    );
    expect(
      `${seller.token} available vs transfers and reversals`,
      seller.available,
      unpaid.filter((t) => !t.onHold).reduce((sum, t) => sum + transferNet(t), 0) -
        reversals.reduce((sum, r) => sum + reversalNet(book, r), 0),
    );
    expect(
      `${seller.token} held vs transfers on hold`,
      seller.held,
      unpaid.filter((t) => t.onHold).reduce((sum, t) => sum + transferLeft(book, t), 0),
    );
  }
  if (market.available < 0) broken.push('marketplace available negative');
  if (market.current < 0) broken.push('marketplace current negative');
  expect(
    'sum of all balances',
    market.available + market.current + market.outside + sellersTotal,
    0,
  );

  let current = 0;
  for (const payment of book.payments.values()) {
    const remaining = paymentRemaining(context, payment);
    if (remaining < 0) broken.push(`${payment.token} remaining negative`);
    current += remaining;
  }
  expect('marketplace current vs split payments', market.current, current);

  let available = 0;
  for (const transfer of book.transfers.values()) {
    if (transfer.reversedAmount > transfer.amount) broken.push(`${transfer.token} over-reversed`);
    if (transfer.reversedCommission > transfer.commission)
      broken.push(`${transfer.token} commission over-reversed`);
    available +=
      transfer.type === 'payment'
        ? transfer.commission - transfer.additional
        : -transferNet(transfer);
  }
  for (const reversal of book.reversals.values())
    available += reversalNet(book, reversal) - reversal.toPayment;
  expect('marketplace available vs transfers and reversals', market.available, available);

  for (const payout of book.payouts.values()) {
    expect(
      `${payout.token} amount vs its sums`,
      payout.amount,
      payout.transferAmount - payout.commission - payout.reversalAmount + payout.reversedCommission,
    );
    if (payout.amount <= 0) broken.push(`${payout.token} not positive`);
    expect(
      `${payout.token} transfer count`,
      payout.transferCount,
      [...book.transfers.values()].filter((t) => t.payout === payout.token).length,
    );
    expect(
      `${payout.token} reversal count`,
      payout.reversalCount,
      [...book.reversals.values()].filter((r) => r.payout === payout.token).length,
    );
  }
  return broken;
}
