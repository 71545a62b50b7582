import { type AccountReference } from './consent-model.js';

/** psd2.yaml `TransactionStatus` values the sandbox produces. */
export type TransactionStatus = 'RCVD' | 'ACTC' | 'ACSC' | 'RJCT';

export interface Payment {
  paymentId: string;
  brandId: string;
  tppId: string;
  /** Canonical product name (the key of the product rules). */
  product: string;
  /** The spelling the TPP used, kept for the links it gets back. */
  productInPath: string;
  /** The body as initiated (JSON), plus debtorAccount once the PSU chose it. */
  details: Record<string, unknown>;
  status: TransactionStatus;
  /** Every status the payment went through, oldest first; ACTC is passed on the way to ACSC. */
  statusHistory: TransactionStatus[];
  /** Why the bank rejected it, shown to the PSU. */
  rejectionReason?: string;
  redirectUri: string;
  nokRedirectUri?: string;
  authorisationId: string;
}

/** Typed view of the fields of a payment body the bank acts on. */
export interface PaymentFacts {
  amount: string;
  currency: string;
  creditorName: string;
  creditorIban: string;
  remittance: string;
  debtorIban?: string;
}

export function paymentFacts(details: Record<string, unknown>): PaymentFacts {
  const amount = details.instructedAmount as { amount: string; currency: string };
  const creditorAccount = details.creditorAccount as AccountReference;
  const debtorAccount = details.debtorAccount as AccountReference | undefined;
  return {
    amount: amount.amount,
    currency: amount.currency,
    creditorName: String(details.creditorName),
    creditorIban: creditorAccount.iban,
    remittance: String(details.remittanceInformationUnstructured),
    ...(debtorAccount ? { debtorIban: debtorAccount.iban } : {}),
  };
}
