import type { CardKind } from '../card/store/card-store.service.js';
import { statusOf as marketplaceStatus } from '../card/marketplace/marketplace-resources.js';
import type { CardOperation } from '../upstreams/card/card.client.js';
import type { ReconciliationCapability } from './reconciliation.entities.js';

/** A provider item as a list or a read answers it (snake_case). */
export type Item = Record<string, unknown> & { token: string };

/**
 * How a provider list of one kind is reconciled: one description per kind, one engine for all
 * (ListReconciler). Statuses are compared in lower case (the provider's clients spell `Pre authorized`).
 */
export interface ListKind {
  kind: CardKind;
  /** The provider's list of the kind (date_from, date_to, count, offset) and its read by id. */
  list: CardOperation;
  retrieve: CardOperation;
  /** The status Portico keeps for a provider item of the kind. */
  status(item: Item): string;
  /** The values compared besides the status: name -> the provider's field. */
  fields: Readonly<Record<string, string>>;
  /** Values that differ make an `amount-differs` drift, whatever the statuses. */
  fixed: readonly string[];
  /** Values that only grow at the provider (refunded): larger there, Portico is behind; smaller, ahead. */
  grows?: readonly string[];
  /** Values compared only when the statuses agree (a fee that follows a refund). */
  follows?: readonly string[];
  /** The statuses the provider's may be, from each of Portico's, for Portico to be behind. */
  moves: Readonly<Record<string, readonly string[]>>;
  /**
   * Which of Portico's rows in doubt may stand for an item found at the provider only (not adopted then:
   * the resolver settles that row): the payment holding its merchant_ref, a refund of its payment, any
   * row of the kind.
   */
  inDoubt: 'merchant-ref' | 'parent' | 'kind';
  /** The field of an item naming its parent (kept on an adopted row). */
  parent?: string;
}

const ownStatus = (item: Item) => String(item.status);

const PAYMENT: ListKind = {
  kind: 'payment',
  list: 'listPayments',
  retrieve: 'retrievePayment',
  status: ownStatus,
  fields: { amount: 'amount', fee: 'fee_amount', refunded: 'refund_amount' },
  fixed: ['amount'],
  grows: ['refunded'],
  // A move forward takes the provider's fee with it (a refund gives fee back).
  follows: ['fee'],
  moves: {
    pending: [
      'pre authorized',
      'captured',
      'partially refunded',
      'refunded',
      'canceled',
      'expired',
      'failed',
    ],
    'pre authorized': ['captured', 'partially refunded', 'refunded', 'canceled', 'expired'],
    captured: ['partially refunded', 'refunded', 'disputed'],
    'partially refunded': ['refunded', 'disputed'],
  },
  inDoubt: 'merchant-ref',
};

const REFUND: ListKind = {
  kind: 'refund',
  list: 'listRefunds',
  retrieve: 'retrieveRefund',
  status: ownStatus,
  fields: { amount: 'amount', fee: 'fee_amount' },
  fixed: ['amount', 'fee'],
  // A refund is final when made (Captured or Failed): any other status is not Portico's to follow.
  moves: {},
  inDoubt: 'parent',
  parent: 'payment',
};

const CUSTOMER: ListKind = {
  kind: 'customer',
  list: 'listCustomers',
  retrieve: 'retrieveCustomer',
  status: (item) => (item.is_active === false ? 'deleted' : 'active'),
  fields: {},
  fixed: [],
  moves: { active: ['deleted'] },
  inDoubt: 'kind',
};

const NOTIFICATION: ListKind = {
  kind: 'notification',
  list: 'listNotifications',
  retrieve: 'retrieveNotification',
  status: ownStatus,
  fields: { amount: 'amount' },
  fixed: ['amount'],
  moves: {
    pending: ['awaiting', 'paid', 'expired', 'canceled'],
    awaiting: ['paid', 'expired', 'canceled'],
  },
  inDoubt: 'kind',
};

const SELLER: ListKind = {
  kind: 'seller',
  list: 'listSellers',
  retrieve: 'retrieveSeller',
  status: (item) => marketplaceStatus('seller', item as never),
  fields: {},
  fixed: [],
  // The provider's decisions: a seller suspended and authorised again; closed for good.
  moves: { authorized: ['suspended', 'closed'], suspended: ['authorized', 'closed'] },
  inDoubt: 'kind',
};

const TRANSFER: ListKind = {
  kind: 'transfer',
  list: 'listTransfers',
  retrieve: 'retrieveTransfer',
  status: (item) => marketplaceStatus('transfer', item as never),
  fields: {
    amount: 'amount',
    commission: 'commission_amount',
    reversed: 'reversed_amount',
  },
  fixed: ['amount', 'commission'],
  grows: ['reversed'],
  moves: {
    pending: ['on_hold', 'paid_out', 'reversed'],
    on_hold: ['pending', 'paid_out', 'reversed'],
    paid_out: ['reversed'],
  },
  inDoubt: 'kind',
};

const REVERSAL: ListKind = {
  kind: 'reversal',
  list: 'listReversals',
  retrieve: 'retrieveReversal',
  status: (item) => marketplaceStatus('reversal', item as never),
  fields: { amount: 'amount', commission: 'commission_amount' },
  fixed: ['amount', 'commission'],
  moves: { pending: ['paid_out'] },
  inDoubt: 'kind',
};

const PAYOUT: ListKind = {
  kind: 'payout',
  list: 'listPayouts',
  retrieve: 'retrievePayout',
  status: (item) => marketplaceStatus('payout', item as never),
  fields: {
    amount: 'amount',
    transfers: 'transfer_amount',
    reversals: 'reversal_amount',
    commission: 'commission_amount',
  },
  fixed: ['amount', 'transfers', 'reversals', 'commission'],
  moves: { pending: ['deposited'] },
  inDoubt: 'kind',
};

/** The provider's lists each capability reconciles, in this order (a payment before its refunds). */
export const LIST_KINDS: Partial<Record<ReconciliationCapability, readonly ListKind[]>> = {
  card: [PAYMENT, REFUND],
  customers: [CUSTOMER],
  notifications: [NOTIFICATION],
  marketplace: [SELLER, TRANSFER, REVERSAL, PAYOUT],
};
