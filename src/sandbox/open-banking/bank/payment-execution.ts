import { type LedgerAccount } from './account-model.js';
import { type BankContext } from './bank-state.js';
import { parseAmount } from './money.js';
import { paymentFacts, type Payment } from './payment-model.js';

/** ISO 20022 bank transaction code of the debit the payment books, by product. */
const BANK_TRANSACTION_CODE: Readonly<Record<string, string>> = {
  'domestic-credit-transfers': 'PMNT-ICDT-DMCT',
  'sepa-credit-transfers': 'PMNT-ICDT-ESCT',
  'cross-border-credit-transfers': 'PMNT-ICDT-XBCT',
};

/** Why the bank refuses to execute from this account, or undefined when it can. */
export function refusalReason(
  context: BankContext,
  payment: Payment,
  debtor: LedgerAccount,
): string | undefined {
  const facts = paymentFacts(payment.details);
  if (debtor.seed.status !== 'enabled') return 'The account is blocked.';
  if (facts.currency !== debtor.seed.currency)
    return `The account is held in ${debtor.seed.currency}, the payment is in ${facts.currency}.`;
  if (parseAmount(facts.amount) > context.state.ledger.available(debtor))
    return 'Insufficient funds on the account.';
  return undefined;
}

/**
 * The PSU approved: the sandbox settles at once (RCVD -> ACTC -> ACSC) and books the debit,
 * or rejects (RJCT) when the account cannot pay, as psd2.yaml says for insufficient funds.
 */
export function executePayment(
  context: BankContext,
  payment: Payment,
  debtor: LedgerAccount,
): void {
  payment.details.debtorAccount = { iban: debtor.seed.iban };
  const reason = refusalReason(context, payment, debtor);
  if (reason !== undefined) {
    rejectPayment(payment, reason);
    return;
  }
  const facts = paymentFacts(payment.details);
  payment.statusHistory.push('ACTC');
  context.state.ledger.bookDebit(
    debtor,
    {
      amount: parseAmount(facts.amount),
      counterpartyName: facts.creditorName,
      counterpartyIban: facts.creditorIban,
      remittanceInformationUnstructured: facts.remittance,
      bankTransactionCode: BANK_TRANSACTION_CODE[payment.product] ?? 'PMNT-ICDT-OTHR',
    },
    context.now(),
  );
  payment.status = 'ACSC';
  payment.statusHistory.push('ACSC');
}

export function rejectPayment(payment: Payment, reason: string): void {
  payment.status = 'RJCT';
  payment.statusHistory.push('RJCT');
  payment.rejectionReason = reason;
}
