import type { SubjectKind } from '../audit/trail/status-change.entity.js';
import type { JsonObject } from '../platform/common/json.js';

/**
 * Every event type an app can subscribe to. `sent: false` types are declared for the card side and
 * land with it: adding one is one line here (and `sent: true` once its service records it).
 */
export const WEBHOOK_EVENT_TYPES = {
  'consent.status_changed': { sent: true, about: 'A consent moved to another status' },
  'consent.renewal_due': {
    sent: true,
    about: 'An account-information consent needs a fresh SCA or ends soon',
  },
  'payment.status_changed': {
    sent: true,
    about: 'An open-banking payment moved to another status',
  },
  'card_payment.status_changed': { sent: true, about: 'A card payment moved to another status' },
  'card_refund.status_changed': { sent: true, about: 'A card refund moved to another status' },
  'notification.status_changed': { sent: true, about: "A provider notification's outcome" },
  'iris_session.status_changed': { sent: true, about: 'An IRIS session moved to another status' },
  'pos_transaction.status_changed': {
    sent: true,
    about: 'A POS transaction moved to another status',
  },
  'reconciliation.drift': {
    sent: true,
    about:
      "Reconciliation found Portico's record of a resource and the provider's apart (amounts, a status Portico is ahead on, a resource the provider does not have): flagged, never overwritten",
  },
  'webhook_endpoint.paused': {
    sent: true,
    about: 'A webhook endpoint failed for WEBHOOK_PAUSE_AFTER_MS and is paused until resumed',
  },
} as const satisfies Record<string, { sent: boolean; about: string }>;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;
export const WEBHOOK_EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

/** A notification's payment as the facade shows it (never its card). */
function notificationPayment(data: JsonObject | null): JsonObject {
  const payment = data?.payment as JsonObject | null | undefined;
  return {
    amount: typeof data?.amount === 'number' ? data.amount : null,
    payment: payment
      ? {
          token: payment.token ?? null,
          status: payment.status ?? null,
          amount: payment.amount ?? null,
        }
      : null,
  };
}

/** A POS payment's void once it was captured (null for any other transaction). */
const posVoidedBy = (data: JsonObject | null): JsonObject => ({
  voidedBy: typeof data?.voidedBy === 'string' ? data.voidedBy : null,
});

/**
 * The event a status change of each audited kind of resource sends, the name of its id in `data`, and
 * what else its `data` carries from the card resource's stored answer.
 */
export const STATUS_CHANGE_EVENTS: Record<
  SubjectKind,
  {
    type: WebhookEventType;
    idField: string;
    cardResource?: true;
    detail?: (data: JsonObject | null) => JsonObject;
  } | null
> = {
  consent: { type: 'consent.status_changed', idField: 'consentId' },
  payment: { type: 'payment.status_changed', idField: 'paymentId' },
  // Card resources are named to apps by the provider's token (pmt_…, ref_…), read from card_resources.
  card_payment: { type: 'card_payment.status_changed', idField: 'paymentId', cardResource: true },
  card_refund: { type: 'card_refund.status_changed', idField: 'refundId', cardResource: true },
  // A customer changes only by the app's own calls: no event.
  card_customer: null,
  notification: {
    type: 'notification.status_changed',
    idField: 'notificationId',
    cardResource: true,
    detail: notificationPayment,
  },
  iris_session: {
    type: 'iris_session.status_changed',
    idField: 'sessionId',
    cardResource: true,
    detail: (data) => ({ paymentId: typeof data?.payment === 'string' ? data.payment : null }),
  },
  // Marketplace resources: Portico learns of their changes only from the app's own calls (no events yet).
  card_seller: null,
  card_transfer: null,
  card_reversal: null,
  card_payout: null,
  // A POS payment or void, named by its transaction_id; a voided payment names its void.
  pos_payment: {
    type: 'pos_transaction.status_changed',
    idField: 'transactionId',
    cardResource: true,
    detail: posVoidedBy,
  },
  pos_void: {
    type: 'pos_transaction.status_changed',
    idField: 'transactionId',
    cardResource: true,
    detail: posVoidedBy,
  },
  // Wallets: the app learns the outcome from its own calls and the browser's return (no events yet).
  wallet_token: null,
  wallet_domain: null,
};
