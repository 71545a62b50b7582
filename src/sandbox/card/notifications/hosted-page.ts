import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CardContract } from '#src/shared/contracts/card-contract.js';
import { CardError } from '../card-context.js';
import type { CardSandbox } from '../card-sandbox.js';
import { sandboxPage } from '../iris/iris-pages-html.js';
import { escapeHtml } from '../iris/iris-sessions.js';
import { payNotification, type HostedCard } from './hosted-payment.js';
import { settleNotification } from './notifications.js';
import type { NotificationRecord } from './notification-record.js';

const CARD_FIELDS = [
  'card_number',
  'expiration_month',
  'expiration_year',
  'holder_name',
  'cvv',
] as const;

const WORDS = {
  en: {
    title: 'Payment request',
    pay: 'Pay',
    paid: 'Payment completed',
    gone: 'This payment request can no longer be paid',
    labels: ['Card number', 'Expiry month (MM)', 'Expiry year (YYYY)', 'Cardholder name', 'CVV'],
  },
  el: {
    title: 'Αίτημα πληρωμής',
    pay: 'Πληρωμή',
    paid: 'Η πληρωμή ολοκληρώθηκε',
    gone: 'Αυτό το αίτημα πληρωμής δεν μπορεί πλέον να πληρωθεί',
    labels: ['Αριθμός κάρτας', 'Μήνας λήξης (ΜΜ)', 'Έτος λήξης (ΕΕΕΕ)', 'Όνομα κατόχου', 'CVV'],
  },
};

const html = (reply: FastifyReply, status: number, page: string) =>
  reply
    .code(status)
    .headers({ 'cache-control': 'no-store', 'x-frame-options': 'DENY' })
    .type('text/html; charset=utf-8')
    .send(page);

function payPage(notification: NotificationRecord, merchant: string, error?: string): string {
  const words = WORDS[notification.locale];
  const inputs = CARD_FIELDS.map(
    (field, index) =>
      `<label>${words.labels[index]}<input name="${field}" id="${field}" autocomplete="off" required></label>`,
  ).join('');
  return sandboxPage(
    words.title,
    `<p>${escapeHtml(merchant)}: ${escapeHtml(notification.description)}</p>
<p><strong id="amount">€${(notification.amount / 100).toFixed(2)}</strong> · ${escapeHtml(notification.payeeName)}</p>
${error ? `<p class="error" id="error">${escapeHtml(error)}</p>` : ''}
<form method="POST" action="/pay/${notification.token}">${inputs}<button type="submit" id="pay">${words.pay}</button></form>`,
  );
}

/**
 * The hosted payment page of a notification (its payment_link_url, on the page listener):
 *   GET  /pay/{pnt}  the page: amount, description, card fields (Expired/Canceled: 410; Paid: 200, done)
 *   POST /pay/{pnt}  pays with the card typed; a refusal (400/402/500/502, the card's own code)
 *                    shows the page again with the message and leaves the notification Pending
 */
export function registerHostedPaymentPage(
  server: FastifyInstance,
  card: CardSandbox,
  contract: CardContract,
): void {
  const createPayment = contract.operation('createPayment');

  const answer = async (
    reply: FastifyReply,
    id: string,
    pay: ((merchantId: string) => NotificationRecord | CardError) | undefined,
  ) => {
    const book = card.ownerOf('notification', id);
    if (!book) return html(reply, 404, sandboxPage('Not found', '<p>No such payment request.</p>'));
    const merchant = book.merchant.name;
    const current = card.act(book.merchant.id, (context) =>
      settleNotification(context, book.notifications.get(id) as NotificationRecord),
    ) as NotificationRecord;
    await card.persisted();
    const words = WORDS[current.locale];
    if (current.status === 'Paid')
      return html(reply, 200, sandboxPage(words.paid, `<p id="status">Paid</p>`));
    if (current.status !== 'Pending')
      return html(reply, 410, sandboxPage(words.gone, `<p id="status">${current.status}</p>`));
    if (!pay) return html(reply, 200, payPage(current, merchant));
    const result = pay(book.merchant.id);
    await card.persisted();
    if (result instanceof CardError)
      return html(
        reply,
        result.status,
        payPage(current, merchant, contract.message(result.code, ...result.values)),
      );
    return html(reply, 200, sandboxPage(words.paid, `<p id="status">Paid</p>`));
  };

  server.get('/pay/:pnt', async (request, reply) =>
    answer(reply, (request.params as { pnt: string }).pnt, undefined),
  );
  server.post('/pay/:pnt', async (request, reply) => {
    const { pnt } = request.params as { pnt: string };
    const form = (request.body ?? {}) as Record<string, unknown>;
    const typed = Object.fromEntries(
      CARD_FIELDS.map((field) => [
        field,
        typeof form[field] === 'string' ? form[field].trim() : undefined,
      ]),
    ) as Partial<HostedCard>;
    return answer(reply, pnt, (merchantId) => {
      // The card fields are checked against POST /payments' schema, with its error codes.
      const problem = contract
        .validateRequest(createPayment, {
          params: {},
          query: {},
          headers: {},
          body: { amount: 100, ...typed },
        })
        .find((candidate) => CARD_FIELDS.some((field) => candidate.path === `body.${field}`));
      const missing = CARD_FIELDS.find((field) => !typed[field]);
      if (problem || missing) {
        const field = problem ? problem.path.slice('body.'.length) : (missing as string);
        return new CardError(400, contract.errorCodeOf(createPayment, field), field);
      }
      return card.act(merchantId, (context) => payNotification(context, pnt, typed as HostedCard));
    });
  });
}
