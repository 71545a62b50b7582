/** The marketplace's records in the card sandbox (seed document 001), one merchant = one marketplace. */

export interface BankAccountRecord {
  token: string;
  created: string;
  iban: string;
  bankName: string;
  beneficiary: string;
  isDefault: boolean;
  /** A changed IBAN becomes the default at this time (seller verification); null once verified. */
  verifiesAt: string | null;
}

export type SellerStatus = 'Authorized' | 'Suspended' | 'Closed';

export interface SellerRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  modified: string;
  status: SellerStatus;
  email: string;
  contactPhone: string;
  description: string;
  business: { name: string; title: string; taxNumber: string; address: string };
  bankAccounts: BankAccountRecord[];
  payoutInterval: 'daily' | 'weekly' | 'monthly';
  payoutFrequency: string[];
  threshold: number;
  payoutsOnHold: boolean;
  isC2c: boolean | null;
  /** Ledger balances: what the next payout pays, and what transfers on hold keep back. */
  available: number;
  held: number;
  /** The last day (YYYY-MM-DD) a payout was made. */
  lastPayoutDay: string | null;
}

export type TransferType = 'payment' | 'debit' | 'credit';

export interface TransferRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  type: TransferType;
  seller: string;
  payment: string | null;
  amount: number;
  commission: number;
  /** Part of the amount taken from the marketplace's available balance. */
  additional: number;
  description: string;
  onHold: boolean;
  payout: string | null;
  reversedAmount: number;
  reversedCommission: number;
  /** Part of the reversed amount given back to the payment (the rest went to available). */
  reversedToPayment: number;
  reversals: string[];
}

export interface ReversalRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  description: string;
  amount: number;
  commission: number;
  transfer: string;
  /** Part of the amount given back to the transfer's payment. */
  toPayment: number;
  payout: string | null;
}

export interface PayoutRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  day: string;
  seller: string;
  amount: number;
  status: 'Pending' | 'Deposited';
  deposited: string | null;
  bankAccount: BankAccountRecord;
  statement: string;
  transferAmount: number;
  reversalAmount: number;
  commission: number;
  reversedCommission: number;
  transferCount: number;
  reversalCount: number;
}

/** A ledger account: the marketplace's two balances, a seller's two, and the world outside. */
export type Account =
  | 'marketplace:available'
  | 'marketplace:current'
  | 'outside'
  | `seller:${string}:available`
  | `seller:${string}:held`;

/** One line of a double-entry movement; the lines of a movement add up to 0. */
export interface LedgerEntryRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  /** What moved the money (`transfer tra_…`, `payout pay_…`, `capture pmt_…`). */
  movement: string;
  account: Account;
  amount: number;
}

/** The marketplace of a merchant: its balances, its account option and the scheduler's last day. */
export interface MarketRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  available: number;
  current: number;
  /** Minus everything that came in from outside (captures) and plus what went out (refunds, payouts). */
  outside: number;
  /** The account option: a payment transfer may exceed the payment's remaining amount. */
  transferAboveRemaining: boolean;
  lastRunDay: string | null;
}
