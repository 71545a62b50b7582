import { randomUUID } from 'node:crypto';
import type { PosTransaction, Terminal } from './pos-state.js';

/**
 * The transactions an ERP-linked terminal made on its own and did not report (the seed's kinds: manual
 * transactions after a reported malfunction, preload results, manual credits), one every five hours back
 * from now so that date filters have days to choose; every third is a credit (`refund`).
 */
export function erpPendingOf(terminal: Terminal, count: number, now: number): PosTransaction[] {
  return Array.from({ length: count }, (_, index) => {
    const at = now - (index + 1) * 5 * 3600_000;
    return {
      transactionId: randomUUID(),
      merchantId: terminal.merchantId,
      terminal: terminal.token,
      type: index % 3 === 2 ? 'refund' : 'payment',
      status: 'CAPTURED',
      amount: 500 + index * 10,
      tip: 0,
      currency: 'EUR',
      receivedAt: at,
      decidedAt: at,
      batch: terminal.batch,
      erpPending: true,
      card: {
        cardType: 'VISA',
        cardNumber: '476173******0010',
        authorizationCode: `A${String(index).padStart(5, '0')}`,
        aadeTransactionId: `aade-${terminal.tid}-${index}`,
        acquirerId: 'SANDBOXACQ',
        rrn: String(100_000_000_000 + index),
      },
    };
  });
}

/** One page `{ total_count, page, items }` (page from 1, limit default 10); past the last: no items. */
export function pageOf<T>(
  items: T[],
  query: Record<string, unknown>,
): { total_count: number; page: number; items: T[] } {
  const page = (query.page as number | undefined) ?? 1;
  const limit = (query.limit as number | undefined) ?? 10;
  return {
    total_count: items.length,
    page,
    items: items.slice((page - 1) * limit, page * limit),
  };
}
