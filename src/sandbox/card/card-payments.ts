import {
  CardError,
  invalid,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from './card-context.js';
import { MAX_INSTALLMENTS } from './card-numbers.js';
import {
  activeCustomer,
  addCustomerCard,
  cardFromFields,
  cardOf,
  consumeToken,
  hasCardFields,
  knownCustomer,
  usableToken,
} from './card-sources.js';
import type { CardTokenRecord, CustomerRecord, PaymentRecord, StoredCard } from './card-state.js';
import { paymentStatusAs } from './answer-style.js';
import { cardExpired, customerView, paymentView } from './card-views.js';
import { payFromIrisSource } from './iris/iris-sessions.js';
import { paymentTransfers, splitPaymentCaptured } from './marketplace/split-payments.js';

/** A pre-authorisation not captured within 7 days is cancelled (provider facts). */
export const PRE_AUTHORISATION_MS = 7 * 86_400_000;

/** The service fee: 1.5 % of the amount, rounded half up, plus 20 cents (card.yaml "Fees"). */
export function feeOf(amount: number): number {
  return Math.floor((amount * 15 + 500) / 1000) + 20;
}

/** Applies the transitions time makes: a pre-authorisation past its 7 days becomes Canceled. */
export function settle(context: CardContext, payment: PaymentRecord): PaymentRecord {
  if (
    payment.status === 'Pre Authorized' &&
    context.now.getTime() - new Date(payment.created).getTime() >= PRE_AUTHORISATION_MS
  ) {
    payment.status = 'Canceled';
    context.state.put(context.book, 'payment', payment);
  }
  return payment;
}

export function knownPayment(context: CardContext, id: string): PaymentRecord {
  const payment = context.book.payments.get(id);
  if (!payment) throw new CardError(404, 40005, id);
  return settle(context, payment);
}

export const viewPayment = (context: CardContext, payment: PaymentRecord) => {
  const view = paymentView(payment, (id) => context.book.refunds.get(id), context.now);
  return {
    ...view,
    status: paymentStatusAs(context, view.status as string),
    ...paymentTransfers(context, payment),
  };
};

const flag = (value: unknown) => value === 1;

interface Source {
  card: StoredCard;
  token?: CardTokenRecord;
  customer?: CustomerRecord;
}

/** Exactly one source: card arguments, a card token, an active customer (or a bank-payment source). */
function sourceOf(context: CardContext, body: Record<string, unknown>): Source {
  const fields = hasCardFields(body);
  const id = body.token as string | undefined;
  if (fields === (id !== undefined)) throw new CardError(400, 40001);
  if (body.card !== undefined && !id?.startsWith('cus_')) throw invalid('card');
  if (fields && context.book.merchant.type === '3dsecure') throw new CardError(400, 20011);
  if (fields) return { card: cardFromFields(context, body, { cvvRequired: true }) };
  if (id?.startsWith('ctn_')) {
    const token = usableToken(context, id);
    if (token.amount !== undefined && body.amount !== undefined && token.amount !== body.amount)
      throw new CardError(400, 40029);
    return { card: token.card, token };
  }
  if (id?.startsWith('cus_')) {
    const customer = knownCustomer(context, id);
    if (!customer.active) throw new CardError(400, 40001);
    const card = cardOf(customer, (body.card as string | undefined) ?? customer.defaultCard);
    return { card, customer };
  }
  throw new CardError(400, 40001);
}

/** `months` calendar months after `from`, on the same day or the month's last when it has fewer days. */
export function monthsAfter(from: Date, months: number): Date {
  const due = new Date(from);
  due.setUTCDate(1);
  due.setUTCMonth(due.getUTCMonth() + months);
  const last = new Date(Date.UTC(due.getUTCFullYear(), due.getUTCMonth() + 1, 0)).getUTCDate();
  due.setUTCDate(Math.min(from.getUTCDate(), last));
  return due;
}

/**
 * The child payments of an installment payment, the first due the next day and the others a month
 * apart from it (the clients' fixtures; a month without that day takes its last): equal shares
 * rounded up to 10 cents, the last taking the remainder (10480 over three: 3500, 3500, 3480), the
 * fee shared the same way; plain floor shares where rounding up would leave the last nothing.
 */
function installmentsOf(
  context: CardContext,
  amount: number,
  fee: number,
  count: number,
): PaymentRecord['installments'] {
  if (count <= 1) return [];
  let part = Math.ceil(amount / count / 10) * 10;
  if (part * (count - 1) >= amount) part = Math.floor(amount / count);
  const parts = Array.from({ length: count }, (_, index) =>
    index === count - 1 ? amount - part * (count - 1) : part,
  );
  let feeGiven = 0;
  const first = new Date(context.now.getTime() + 86_400_000);
  return parts.map((share, index) => {
    const due = monthsAfter(first, index);
    const partFee = index === count - 1 ? fee - feeGiven : Math.floor((fee * share) / amount);
    feeGiven += partFee;
    return { token: newId('pmt'), amount: share, fee: partFee, dueDate: due.toISOString() };
  });
}

export function createPayment(context: CardContext, request: CardRequest): CardAnswer {
  const { body } = request;
  const tokenId = body.token as string | undefined;
  if (body.amount === undefined && !tokenId?.startsWith('ctn_')) throw new CardError(400, 40002);
  if (tokenId?.startsWith('src_')) return payFromIrisSource(context, body);
  const source = sourceOf(context, body);
  // A token bound to an amount is charged that amount when the payment names none (the clients' way).
  const amount = (body.amount as number | undefined) ?? source.token?.amount;
  if (amount === undefined) throw new CardError(400, 40002);

  if (body.max_installments !== undefined) {
    const expected = source.token?.card.supportsInstallments ? MAX_INSTALLMENTS : 0;
    if (!source.token || body.max_installments !== expected) throw invalid('max_installments');
  }
  const installments = (body.installments as number | undefined) ?? 1;
  if (installments > 1 && !source.card.supportsInstallments) throw invalid('installments');

  const createCustomer = flag(body.create_customer);
  let assignTo: CustomerRecord | undefined;
  if (body.customer !== undefined) {
    if (source.customer) throw invalid('customer');
    assignTo = activeCustomer(context, body.customer as string);
  } else if (flag(body.default_card)) throw invalid('default_card');
  if (createCustomer && (source.customer || assignTo)) throw invalid('create_customer');

  const mandateId = body.mandate as string | undefined;
  let mandateReference = body.mandate_reference as string | undefined;
  let card = source.card;
  if (mandateId !== undefined) {
    const mandate = context.book.mandates.get(mandateId);
    if (!mandate) throw new CardError(404, 10002);
    if (
      !source.customer ||
      mandate.customer !== source.customer.token ||
      mandate.status !== 'valid'
    )
      throw invalid('mandate');
    if (body.card !== undefined) throw invalid('card');
    if (mandateReference !== undefined && mandateReference !== (mandate.reference ?? undefined))
      throw invalid('mandate_reference');
    mandateReference = mandate.reference ?? undefined;
    card = mandate.card;
  } else if (mandateReference !== undefined && !source.customer && !assignTo && !createCustomer)
    throw invalid('mandate_reference');

  // A stored card (a customer's, a mandate's) may have expired since it was stored.
  if (cardExpired(card, context.now)) throw new CardError(400, 20004);

  const branchToken = body.branch_token as string | undefined;
  if (branchToken !== undefined && !context.book.branches.has(branchToken))
    throw new CardError(404, 10002);
  const merchantRef = body.merchant_ref as string | undefined;
  if (merchantRef !== undefined && context.book.merchantRefs.has(merchantRef))
    throw new CardError(409, 40025);

  // The card network's answer (seeds/README.md test cards): no payment is created on a failure.
  if (card.charge === 'declined') throw new CardError(402, 40004);
  if (card.charge === 'error-500') throw new CardError(500, 99999);
  if (card.charge === 'error-502') throw new CardError(502, 40013);

  if (source.token) consumeToken(context, source.token);
  const created = context.now.toISOString();
  let customer = source.customer;
  if (createCustomer) {
    customer = {
      token: newId('cus'),
      merchantId: context.book.merchant.id,
      seq: context.state.nextSeq(),
      created,
      modified: created,
      description: null,
      fullName: card.holderName,
      email: (body.payee_email as string | undefined) ?? null,
      active: true,
      cards: [],
      defaultCard: '',
    };
    card = addCustomerCard(context, customer, { ...card, token: newId('crd') }, true);
  } else if (assignTo) {
    customer = assignTo;
    card = addCustomerCard(
      context,
      assignTo,
      { ...card, token: newId('crd'), seq: context.state.nextSeq() },
      flag(body.default_card),
    );
  }

  let mandate = mandateId;
  if (mandateId === undefined && mandateReference !== undefined && customer) {
    mandate = newId('man');
    context.state.put(context.book, 'mandate', {
      token: mandate,
      merchantId: context.book.merchant.id,
      seq: context.state.nextSeq(),
      created,
      customer: customer.token,
      status: 'valid',
      reference: mandateReference,
      card,
    });
  }

  const payment: PaymentRecord = {
    token: newId('pmt'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created,
    description: (body.description as string | undefined) ?? '',
    status: body.capture === 0 ? 'Pre Authorized' : 'Captured',
    amount,
    fee: feeOf(amount),
    payeeEmail: (body.payee_email as string | undefined) ?? customer?.email ?? null,
    payeePhone: (body.payee_phone as string | undefined) ?? null,
    merchantRef: merchantRef ?? null,
    card,
    metadata: { ...((body.metadata as Record<string, string> | undefined) ?? {}) },
    refundAmount: 0,
    refunds: [],
    installments: installmentsOf(context, amount, feeOf(amount), installments),
    split: flag(body.split),
    ...(mandate ? { mandate } : {}),
    ...(mandateReference ? { mandateReference } : {}),
    branchToken: branchToken ?? '',
  };
  context.state.put(context.book, 'payment', payment);
  splitPaymentCaptured(context, payment);
  // The clients read the customer from the answer of a payment that made it or charged it (provider facts).
  const answered = createCustomer || source.customer !== undefined;
  return ok({
    ...viewPayment(context, payment),
    ...(answered && customer ? { customer: customerView(customer, context.now) } : {}),
  });
}

export function retrievePayment(context: CardContext, request: CardRequest): CardAnswer {
  return ok(viewPayment(context, knownPayment(context, request.params.paymentId)));
}

export function updatePayment(context: CardContext, request: CardRequest): CardAnswer {
  const payment = knownPayment(context, request.params.paymentId);
  const { description, metadata } = request.body;
  if (description !== undefined) payment.description = description as string;
  if (metadata !== undefined)
    payment.metadata = metadata === '' ? {} : { ...(metadata as Record<string, string>) };
  context.state.put(context.book, 'payment', payment);
  return ok(viewPayment(context, payment));
}

export function capturePayment(context: CardContext, request: CardRequest): CardAnswer {
  const payment = knownPayment(context, request.params.paymentId);
  if (payment.status !== 'Pre Authorized') throw new CardError(400, 40023);
  payment.status = 'Captured';
  context.state.put(context.book, 'payment', payment);
  splitPaymentCaptured(context, payment);
  return ok(viewPayment(context, payment));
}

const STATUS_FILTER: Record<string, string[]> = {
  captured: ['Captured'],
  fully_refunded: ['Refunded'],
  partially_refunded: ['Partially Refunded'],
  refunded: ['Refunded', 'Partially Refunded'],
};
/** Every payment of this part of the contract is a card payment. */
const METHOD_FILTER: Record<string, boolean> = { card: true };

export function listPayments(context: CardContext, request: CardRequest): CardAnswer {
  const { query } = request;
  const status = query.status as string | undefined;
  const method = query.payment_method as string | undefined;
  const ref = query.merchant_ref as string | undefined;
  const payments = [...context.book.payments.values()]
    .map((payment) => settle(context, payment))
    .filter(
      (payment) =>
        (!status || STATUS_FILTER[status].includes(payment.status)) &&
        (!method || METHOD_FILTER[method] === true) &&
        (ref === undefined || payment.merchantRef === ref),
    );
  return page(payments, query, (payment) => viewPayment(context, payment));
}
