import { type Milli } from './money.js';
import { type SandboxAccountSeed } from './test-users.js';

/** One entry of an account's history, kept in the bank's terms and rendered to psd2.yaml `Transaction` on read. */
export interface LedgerTransaction {
  transactionId: string;
  entryReference: string;
  /** Signed: credits positive, debits negative. */
  amount: Milli;
  currency: string;
  /** The other party: creditor of a debit, debtor of a credit. */
  counterpartyName: string;
  counterpartyIban: string;
  /** Absent while pending. */
  bookingDate?: Date;
  valueDate: Date;
  remittanceInformationUnstructured: string;
  bankTransactionCode: string;
  proprietaryBankTransactionCode: string;
}

export interface LedgerAccount {
  seed: SandboxAccountSeed;
  ownerUsername: string;
  /** Opaque, stable account id (psd2.yaml `resourceId`); deliberately not derived visibly from the IBAN. */
  resourceId: string;
  /** Oldest first. */
  booked: LedgerTransaction[];
  pending: LedgerTransaction[];
  interimBooked: Milli;
  lastChange: Date;
}
