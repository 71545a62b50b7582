import { transactionTime, type PosTransaction, type Terminal } from './pos-state.js';

/**
 * A transaction as the POS API answers it: just `{ status: CANCELLED }` when cancelled (the seed), the
 * request's own fields while in flight or refused for a disconnected device, everything once decided.
 */
export function transactionView(tx: PosTransaction, terminal: Terminal): Record<string, unknown> {
  if (tx.status === 'CANCELLED') return { status: 'CANCELLED' };
  const view: Record<string, unknown> = {
    status: tx.status,
    transaction_id: tx.transactionId,
    amount: tx.amount,
    tip: tx.tip,
    currency: tx.currency,
    type: tx.type,
    tid: terminal.tid,
    mid: terminal.mid,
    terminal: terminal.token,
  };
  if (tx.originalTransactionId) view.original_transaction_id = tx.originalTransactionId;
  if (tx.metadata) view.metadata = tx.metadata;
  if (tx.decidedAt !== undefined) view.transaction_time = transactionTime(tx.decidedAt);
  if (tx.card)
    Object.assign(view, {
      card_type: tx.card.cardType,
      card_number: tx.card.cardNumber,
      authorization_code: tx.card.authorizationCode,
      aade_transaction_id: tx.card.aadeTransactionId,
      acquirer_id: tx.card.acquirerId,
      rrn: tx.card.rrn,
    });
  if (tx.batch !== undefined && tx.status === 'CAPTURED') view.batch = String(tx.batch);
  return view;
}

export function terminalView(terminal: Terminal): Record<string, unknown> {
  return {
    status: terminal.status,
    tid: terminal.tid,
    mid: terminal.mid,
    token: terminal.token,
    date_onboarded: terminal.dateOnboarded,
    company: terminal.company,
    ...(terminal.cashRegister
      ? {
          cash_registry_id: terminal.cashRegister.id,
          cash_registry_type: 'VCR',
          cash_registry_validation: terminal.cashRegister.validation,
        }
      : {}),
  };
}
