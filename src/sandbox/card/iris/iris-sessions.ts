import { createHmac, randomUUID } from 'node:crypto';
import {
  CardError,
  invalid,
  newId,
  ok,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { feeOf, viewPayment } from '../card-payments.js';
import { hasCardFields } from '../card-sources.js';
import type { PaymentRecord } from '../card-state.js';
import { timestamp } from '../card-views.js';
import type { PageAddresses } from '../notifications/notifications.js';
import type { IrisSessionRecord } from './iris-record.js';

/** A session lives 15 minutes (card.yaml createIrisSession). */
export const IRIS_SESSION_MS = 15 * 60_000;

export const bankPageOf = (pages: PageAddresses, token: string) =>
  `${pages.pagesUrl}/iris/bank/${token}`;
export const resultPageOf = (pages: PageAddresses, token: string) =>
  `${pages.pagesUrl}/iris/result/${token}`;

/** Applies the move time makes: a session not yet authorized is expired after 15 minutes. */
export function settleIris(context: CardContext, session: IrisSessionRecord): IrisSessionRecord {
  if (
    (session.status === 'created' || session.status === 'initiated') &&
    context.now.getTime() >= new Date(session.expires).getTime()
  ) {
    session.status = 'expired';
    context.state.put(context.book, 'iris', session);
  }
  return session;
}

export function knownIris(context: CardContext, id: string): IrisSessionRecord {
  const session = context.book.irisSessions.get(id);
  if (!session) throw new CardError(404, 10002);
  return settleIris(context, session);
}

export function irisView(pages: PageAddresses, session: IrisSessionRecord) {
  return {
    token: session.token,
    signature: session.signature,
    uuid: session.uuid,
    md: session.md,
    date_created: timestamp(session.created),
    expiration_date: timestamp(session.expires),
    amount: session.amount,
    status: session.status,
    debtorBankUrl: session.initiated ? bankPageOf(pages, session.token) : null,
    authorisationRequestId: session.authorisationRequestId,
    initiatedAt: session.initiated ? timestamp(session.initiated) : null,
    expiresAt: session.initiated ? timestamp(session.expires) : null,
    transactionResultUrl: resultPageOf(pages, session.token),
  };
}

function signatureOf(secretKey: string, session: Omit<IrisSessionRecord, 'signature'>): string {
  const fields = [session.token, session.amount, session.currency, session.uuid, session.md];
  return createHmac('sha256', secretKey).update(fields.join('|'), 'utf8').digest('base64');
}

/** The IRIS operations of card.yaml, bound to the address of the bank pages. */
export function irisOperations(pages: PageAddresses) {
  function createIrisSession(context: CardContext, request: CardRequest): CardAnswer {
    const { body } = request;
    const uuid = (body.uuid as string | undefined) ?? randomUUID();
    if ([...context.book.irisSessions.values()].some((session) => session.uuid === uuid))
      throw invalid('uuid');
    const created = context.now.toISOString();
    const unsigned: Omit<IrisSessionRecord, 'signature'> = {
      token: newId('src'),
      merchantId: context.book.merchant.id,
      seq: context.state.nextSeq(),
      created,
      expires: new Date(context.now.getTime() + IRIS_SESSION_MS).toISOString(),
      uuid,
      md: (body.md as string | undefined) ?? '',
      amount: body.amount as number,
      currency: 'EUR',
      country: body.country as string,
      callbackUrl: body.callback_url as string,
      webhookUrl: (body.webhook_url as string | undefined) ?? null,
      status: 'created',
      authorisationRequestId: null,
      initiated: null,
      payment: null,
      delivery: { order: 'callback-webhook', copies: 1 },
    };
    const session = {
      ...unsigned,
      signature: signatureOf(context.book.merchant.secretKey, unsigned),
    };
    context.state.put(context.book, 'iris', session);
    return ok(irisView(pages, session));
  }

  /** The payment form: the browser (with the public key) opens the bank page of a session. */
  function createIrisPayform(context: CardContext, request: CardRequest): CardAnswer {
    const { body } = request;
    const found = [...context.book.irisSessions.values()].find(
      (candidate) => candidate.signature === body.token,
    );
    if (!found) throw new CardError(404, 10002);
    const session = settleIris(context, found);
    if (session.status !== 'created' && session.status !== 'initiated') throw invalid('token');
    if (body.amount !== session.amount) throw invalid('amount');
    if (body.uuid !== undefined && body.uuid !== session.uuid) throw invalid('uuid');
    if (body.md !== undefined && body.md !== session.md) throw invalid('md');
    if (session.status === 'created') {
      session.status = 'initiated';
      session.initiated = context.now.toISOString();
      session.authorisationRequestId = randomUUID();
      context.state.put(context.book, 'iris', session);
    }
    const hidden = (name: string, value: string) =>
      `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
    const payload =
      `<form id="iris-payform" method="POST" action="${escapeHtml(bankPageOf(pages, session.token))}">` +
      hidden('callback_url', session.callbackUrl) +
      hidden('md', session.md) +
      hidden('pk', context.book.merchant.publicKey) +
      `<button type="submit">${body.locale === 'en' ? 'Pay with IRIS' : 'Πληρωμή με IRIS'}</button></form>`;
    return ok({ data: { payload } });
  }

  return { createIrisSession, createIrisPayform };
}

/**
 * A payment from a bank-payment source (POST /payments token=src_...): only an authorized source,
 * once (41001 afterwards), for the session's amount (40029 otherwise), captured, no card.
 */
export function payFromIrisSource(context: CardContext, body: Record<string, unknown>): CardAnswer {
  if (hasCardFields(body)) throw new CardError(400, 40001);
  const session = knownIris(context, body.token as string);
  if (session.status === 'captured') throw new CardError(400, 41001, session.token);
  if (session.status !== 'authorized') throw new CardError(400, 40001);
  for (const field of [
    'card',
    'customer',
    'default_card',
    'create_customer',
    'mandate',
    'mandate_reference',
    'max_installments',
  ])
    if (body[field] !== undefined && body[field] !== 0) throw invalid(field);
  if (body.capture === 0) throw invalid('capture');
  if (body.installments !== undefined && body.installments !== 1) throw invalid('installments');
  if (body.amount !== session.amount) throw new CardError(400, 40029);
  const branchToken = body.branch_token as string | undefined;
  if (branchToken !== undefined && !context.book.branches.has(branchToken))
    throw new CardError(404, 10002);
  const merchantRef = body.merchant_ref as string | undefined;
  if (merchantRef !== undefined && context.book.merchantRefs.has(merchantRef))
    throw new CardError(409, 40025);
  const payment: PaymentRecord = {
    token: newId('pmt'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    description: (body.description as string | undefined) ?? '',
    status: 'Captured',
    amount: session.amount,
    fee: feeOf(session.amount),
    payeeEmail: (body.payee_email as string | undefined) ?? null,
    payeePhone: (body.payee_phone as string | undefined) ?? null,
    merchantRef: merchantRef ?? null,
    card: null,
    metadata: { ...((body.metadata as Record<string, string> | undefined) ?? {}) },
    refundAmount: 0,
    refunds: [],
    installments: [],
    split: body.split === 1,
    branchToken: branchToken ?? '',
  };
  context.state.put(context.book, 'payment', payment);
  session.status = 'captured';
  session.payment = payment.token;
  context.state.put(context.book, 'iris', session);
  return ok(viewPayment(context, payment));
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string,
  );
}
