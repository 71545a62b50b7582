import type { MerchantBook } from '../card-state.js';
import { timestamp } from '../card-views.js';
import type {
  BankAccountRecord,
  PayoutRecord,
  ReversalRecord,
  SellerRecord,
  TransferRecord,
} from './market-records.js';

/** How card.yaml's marketplace answers spell the sandbox's records. */

export function bankAccountView(account: BankAccountRecord): Record<string, unknown> {
  return {
    token: account.token,
    date_created: timestamp(account.created),
    iban: account.iban,
    bank_name: account.bankName,
    beneficiary_name: account.beneficiary,
    is_default: account.isDefault,
  };
}

export function sellerView(seller: SellerRecord): Record<string, unknown> {
  return {
    token: seller.token,
    date_created: timestamp(seller.created),
    date_modified: timestamp(seller.modified),
    status: seller.status,
    is_authorized: seller.status === 'Authorized',
    email: seller.email,
    contact_phone: seller.contactPhone,
    description: seller.description,
    business: {
      name: seller.business.name,
      title: seller.business.title,
      tax_number: seller.business.taxNumber,
      address: seller.business.address,
    },
    bank_accounts: seller.bankAccounts.map(bankAccountView),
    payout_interval: seller.payoutInterval,
    payout_frequency: [...seller.payoutFrequency],
    payout_threshold_amount: seller.threshold,
    payouts_on_hold: seller.payoutsOnHold,
    is_c2c: seller.isC2c,
  };
}

export function reversalView(reversal: ReversalRecord): Record<string, unknown> {
  return {
    token: reversal.token,
    date_created: timestamp(reversal.created),
    description: reversal.description,
    amount: reversal.amount,
    commission_amount: reversal.commission,
    currency: 'EUR',
    payout: reversal.payout,
    transfer: reversal.transfer,
  };
}

export function transferView(
  book: MerchantBook,
  transfer: TransferRecord,
): Record<string, unknown> {
  return {
    token: transfer.token,
    date_created: timestamp(transfer.created),
    amount: transfer.amount,
    currency: 'EUR',
    description: transfer.description,
    type: transfer.type,
    seller: transfer.seller,
    payment: transfer.payment,
    commission_amount: transfer.commission,
    on_hold: transfer.onHold,
    payout: transfer.payout,
    additional_amount: transfer.additional,
    reversed_amount: transfer.reversedAmount,
    reversed_commission_amount: transfer.reversedCommission,
    is_reversed: transfer.reversedAmount === transfer.amount,
    reversals: transfer.reversals.flatMap((id) => {
      const reversal = book.reversals.get(id);
      return reversal ? [reversalView(reversal)] : [];
    }),
  };
}

export function payoutView(payout: PayoutRecord): Record<string, unknown> {
  return {
    token: payout.token,
    date_created: timestamp(payout.created),
    amount: payout.amount,
    currency: 'EUR',
    status: payout.status,
    is_deposited: payout.status === 'Deposited',
    date_deposited: payout.deposited === null ? null : timestamp(payout.deposited),
    seller: payout.seller,
    bank_account: bankAccountView(payout.bankAccount),
    statement_description: payout.statement,
    transfer_amount: payout.transferAmount,
    reversal_amount: payout.reversalAmount,
    commission_amount: payout.commission,
    reversed_commission_amount: payout.reversedCommission,
    transfer_count: payout.transferCount,
    reversal_count: payout.reversalCount,
  };
}
