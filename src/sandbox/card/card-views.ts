import type {
  BranchRecord,
  CardTokenRecord,
  CustomerRecord,
  MandateRecord,
  PaymentRecord,
  RefundRecord,
  StoredCard,
} from './card-state.js';
import { MAX_INSTALLMENTS } from './card-numbers.js';

/** How the answers of card.yaml spell things, from the sandbox's records. */

/** `YYYY-MM-DDThh:mm:ss+0000` (the sandbox answers in UTC). */
export function timestamp(iso: string): string {
  return `${iso.slice(0, 19)}+0000`;
}

/** `YYYY-MM-DD hh:mm:ss` (mandates). */
export function mandateTimestamp(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

export function cardExpired(card: StoredCard, now: Date): boolean {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  const cardYear = Number(card.expirationYear);
  return cardYear < year || (cardYear === year && Number(card.expirationMonth) < month);
}

/** The 3-D Secure authentication of a card tokenised in the browser; nulls for any other card. */
export function tdsView(card: StoredCard): Record<string, string | null> {
  return card.tds
    ? {
        enrolled: card.tds.enrolled,
        eci_flag: card.tds.eciFlag,
        auth_code: card.tds.authCode,
        auth_desc: card.tds.authDesc,
      }
    : { enrolled: null, eci_flag: null, auth_code: null, auth_desc: null };
}

export function cardView(card: StoredCard, now: Date): Record<string, unknown> {
  return {
    token: card.token,
    type: card.type,
    bin: card.bin,
    last_four: card.lastFour,
    expiration_month: card.expirationMonth,
    expiration_year: card.expirationYear,
    holder_name: card.holderName,
    status: cardExpired(card, now) ? 'expired' : 'valid',
    ...(card.customer ? { customer: card.customer } : {}),
    supports_installments: card.supportsInstallments,
    max_installments: card.supportsInstallments ? MAX_INSTALLMENTS : 0,
    friendly_name: `${card.type} **** ${card.lastFour} (${card.expirationMonth}/${card.expirationYear})`,
    // A stored card is charged without its cvv (the clients' fixtures: false on every customer's card).
    ...(card.customer ? { cvv_required: false } : {}),
    tds: tdsView(card),
  };
}

export function refundView(refund: RefundRecord): Record<string, unknown> {
  return {
    token: refund.token,
    date_created: timestamp(refund.created),
    status: refund.status,
    amount: refund.amount,
    fee_amount: refund.fee,
    description: refund.description,
    metadata: { ...refund.metadata },
    payment: refund.payment,
  };
}

export function paymentView(
  payment: PaymentRecord,
  refunds: (id: string) => RefundRecord | undefined,
  now: Date,
): Record<string, unknown> {
  const refundedFees = payment.refunds.reduce((sum, id) => sum + (refunds(id)?.fee ?? 0), 0);
  return {
    token: payment.token,
    date_created: timestamp(payment.created),
    description: payment.description,
    currency: 'EUR',
    status: payment.status,
    amount: payment.amount,
    refund_amount: payment.refundAmount,
    fee_amount: payment.fee - refundedFees,
    payee_email: payment.payeeEmail,
    payee_phone: payment.payeePhone,
    merchant_ref: payment.merchantRef,
    card: payment.card ? cardView(payment.card, now) : null,
    metadata: { ...payment.metadata },
    refunded: payment.refundAmount === payment.amount,
    refunds: payment.refunds.flatMap((id) => {
      const refund = refunds(id);
      return refund ? [refundView(refund)] : [];
    }),
    installments_count: payment.installments.length,
    installments: payment.installments.map((part) => ({
      token: part.token ?? payment.token,
      date_created: timestamp(payment.created),
      currency: 'EUR',
      status: new Date(part.dueDate) <= now ? 'Captured' : 'Pending installment',
      amount: part.amount,
      fee_amount: part.fee ?? 0,
      due_date: timestamp(part.dueDate),
    })),
    split: payment.split,
    transfer_amount: 0,
    transfers: [],
    ...(payment.mandate ? { mandate: payment.mandate } : {}),
    ...(payment.mandateReference ? { mandate_reference: payment.mandateReference } : {}),
    branch_token: payment.branchToken,
  };
}

export function tokenView(
  token: CardTokenRecord,
  expired: boolean,
  now: Date,
): Record<string, unknown> {
  return {
    token: token.token,
    is_used: token.used,
    has_expired: expired,
    ...(token.amount !== undefined ? { amount: token.amount } : {}),
    date_created: timestamp(token.created),
    card: cardView(token.card, now),
  };
}

export function customerView(customer: CustomerRecord, now: Date): Record<string, unknown> {
  const cards = [...customer.cards].sort((a, b) => b.seq - a.seq);
  const defaultCard =
    customer.cards.find((card) => card.token === customer.defaultCard) ?? cards[0];
  return {
    token: customer.token,
    description: customer.description,
    full_name: customer.fullName,
    email: customer.email,
    date_created: timestamp(customer.created),
    date_modified: timestamp(customer.modified),
    is_active: customer.active,
    cvv_required: false,
    card: cardView(defaultCard, now),
    cards: { count: cards.length, data: cards.map((card) => cardView(card, now)) },
  };
}

export function deletedCustomerView(customer: CustomerRecord): Record<string, unknown> {
  return {
    token: customer.token,
    description: customer.description,
    email: customer.email,
    date_created: timestamp(customer.created),
    full_name: customer.fullName,
    is_active: false,
    date_modified: timestamp(customer.modified),
  };
}

export function mandateView(mandate: MandateRecord, now: Date): Record<string, unknown> {
  return {
    token: mandate.token,
    date_created: mandateTimestamp(mandate.created),
    status: mandate.status,
    payment_method: 'card',
    mandate_reference: mandate.reference,
    payment_method_details: {
      ...cardView(mandate.card, now),
      billing: {
        country: null,
        city: null,
        state: null,
        postal_code: null,
        address_line1: null,
        address_line2: null,
      },
      issuer: null,
      issuer_country: null,
    },
  };
}

export function branchView(branch: BranchRecord): Record<string, unknown> {
  return {
    token: branch.token,
    date_created: timestamp(branch.created),
    title: branch.title,
    description: branch.description,
    street_number: branch.streetNumber,
    street: branch.street,
    postal_code: branch.postalCode,
    address_area: branch.addressArea,
  };
}
