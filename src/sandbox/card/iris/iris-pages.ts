import type { FastifyInstance, FastifyReply } from 'fastify';
import { CardError } from '../card-context.js';
import type { CardSandbox } from '../card-sandbox.js';
import type { IrisMessenger } from './iris-delivery.js';
import { irisMessages, type IrisOutcome } from './iris-messages.js';
import { sandboxPage } from './iris-pages-html.js';
import { escapeHtml, knownIris } from './iris-sessions.js';

const OUTCOMES: Record<string, IrisOutcome> = {
  approve: 'approved',
  refuse: 'refused',
  cancel: 'cancelled',
};

const html = (reply: FastifyReply, status: number, page: string) =>
  reply
    .code(status)
    .headers({ 'cache-control': 'no-store', 'x-frame-options': 'DENY' })
    .type('text/html; charset=utf-8')
    .send(page);

const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

/**
 * The payer's bank (plain HTTP on the page listener):
 *   GET|POST /iris/bank/{src}           the bank page (the payment form's payload posts here)
 *   POST     /iris/bank/{src}/decision  decision=approve|refuse|cancel; answers the page that
 *                                       returns to the merchant, the webhook sent as planned
 *   GET      /iris/result/{src}         the session's result page (transactionResultUrl)
 */
export function registerIrisPages(
  server: FastifyInstance,
  card: CardSandbox,
  messenger: IrisMessenger,
): void {
  const sessionOf = (id: string) => {
    const book = card.ownerOf('iris', id);
    if (!book) return undefined;
    const session = card.act(book.merchant.id, (context) => knownIris(context, id));
    return session instanceof CardError ? undefined : { book, session };
  };

  const bankPage = async (request: { params: unknown; body: unknown }, reply: FastifyReply) => {
    const { src } = request.params as { src: string };
    const found = sessionOf(src);
    if (!found) return html(reply, 404, sandboxPage('Unknown payment', '<p>No such payment.</p>'));
    await card.persisted();
    const pk = (request.body as { pk?: unknown } | undefined)?.pk;
    if (pk !== undefined && pk !== found.book.merchant.publicKey)
      return html(
        reply,
        400,
        sandboxPage('Refused', '<p>The payment form is not this merchant’s.</p>'),
      );
    const { session } = found;
    if (session.status !== 'initiated')
      return html(
        reply,
        409,
        sandboxPage('Bank payment', `<p id="iris-status">This payment is ${session.status}.</p>`),
      );
    const button = (decision: string, label: string) =>
      `<button type="submit" name="decision" value="${decision}" id="iris-${decision}">${label}</button>`;
    return html(
      reply,
      200,
      sandboxPage(
        'Sandbox bank',
        `<p>Pay <strong id="iris-amount">${euros(session.amount)}</strong> to ${escapeHtml(found.book.merchant.name)} by instant bank transfer (IRIS).</p>
<form method="POST" action="/iris/bank/${session.token}/decision">${button('approve', 'Approve')}${button('refuse', 'Refuse')}${button('cancel', 'Cancel')}</form>`,
      ),
    );
  };
  server.get('/iris/bank/:src', bankPage);
  server.post('/iris/bank/:src', bankPage);

  server.post('/iris/bank/:src/decision', async (request, reply) => {
    const { src } = request.params as { src: string };
    const outcome =
      OUTCOMES[String((request.body as { decision?: unknown } | undefined)?.decision)];
    const book = card.ownerOf('iris', src);
    if (!book || !outcome)
      return html(reply, 400, sandboxPage('Refused', '<p>Unknown payment or decision.</p>'));
    const decided = card.act(book.merchant.id, (context) => {
      const session = knownIris(context, src);
      if (session.status !== 'initiated') return session;
      session.status =
        outcome === 'approved' ? 'authorized' : outcome === 'refused' ? 'failed' : 'cancelled';
      context.state.put(context.book, 'iris', session);
      return { ...session, decidedNow: true };
    });
    await card.persisted();
    if (decided instanceof CardError || !('decidedNow' in decided))
      return html(
        reply,
        409,
        sandboxPage(
          'Bank payment',
          `<p id="iris-status">This payment is ${decided instanceof CardError ? 'unknown' : decided.status}.</p>`,
        ),
      );
    const messages = irisMessages(book.merchant.secretKey, decided, outcome);
    const page = await messenger.deliver(
      decided.token,
      decided.delivery,
      decided.callbackUrl,
      decided.webhookUrl ?? book.merchant.webhookUrl,
      messages,
    );
    return html(reply, 200, page);
  });

  server.get('/iris/result/:src', async (request, reply) => {
    const { src } = request.params as { src: string };
    const found = sessionOf(src);
    if (!found) return html(reply, 404, sandboxPage('Unknown payment', '<p>No such payment.</p>'));
    await card.persisted();
    return html(
      reply,
      200,
      sandboxPage(
        'Bank payment',
        `<p id="iris-status">This payment is ${found.session.status}.</p>`,
      ),
    );
  });
}
