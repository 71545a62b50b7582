import { type LedgerAccount, type LedgerTransaction } from './account-model.js';
import { grants, type AccountAccess } from './consent-model.js';
import { isoDateTime } from './dates.js';
import { formatAmount } from './money.js';
import { href } from './request-context.js';

/** Renders ledger records as psd2.yaml response objects (AccountDetails, Transaction). */

export function accountPath(brandId: string, account: LedgerAccount): string {
  return `/${brandId}/bg/v1/accounts/${account.resourceId}`;
}

/** Links only to what the consent lets the TPP read, as Berlin Group does. */
export function accountDto(
  account: LedgerAccount,
  access: AccountAccess,
  withDetails: boolean,
): Record<string, unknown> {
  const { seed } = account;
  const path = accountPath(seed.brandId, account);
  const links: Record<string, { href: string }> = {};
  if (grants(access, 'balances', seed.iban)) links.balances = href(`${path}/balances`);
  if (grants(access, 'transactions', seed.iban)) links.transactions = href(`${path}/transactions`);
  return {
    resourceId: account.resourceId,
    iban: seed.iban,
    currency: seed.currency,
    ownerName: seed.ownerName,
    product: seed.product,
    cashAccountType: seed.cashAccountType,
    name: seed.name,
    status: seed.status,
    ...(withDetails ? { details: seed.details } : {}),
    _links: links,
  };
}

export function transactionDto(
  entry: LedgerTransaction,
  withProprietaryCode: boolean,
): Record<string, unknown> {
  const counterparty =
    entry.amount < 0n
      ? { creditorName: entry.counterpartyName, creditorAccount: { iban: entry.counterpartyIban } }
      : { debtorName: entry.counterpartyName, debtorAccount: { iban: entry.counterpartyIban } };
  return {
    transactionId: entry.transactionId,
    entryReference: entry.entryReference,
    ...counterparty,
    transactionAmount: { currency: entry.currency, amount: formatAmount(entry.amount) },
    ...(entry.bookingDate ? { bookingDate: isoDateTime(entry.bookingDate) } : {}),
    valueDate: isoDateTime(entry.valueDate),
    remittanceInformationUnstructured: entry.remittanceInformationUnstructured,
    bankTransactionCode: entry.bankTransactionCode,
    ...(withProprietaryCode
      ? { proprietaryBankTransactionCode: entry.proprietaryBankTransactionCode }
      : {}),
  };
}
