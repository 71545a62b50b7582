import type { FastifyInstance, FastifyReply } from 'fastify';
import { CardError } from '../card-context.js';
import type { CardSandbox } from '../card-sandbox.js';
import { sandboxPage } from '../iris/iris-pages-html.js';
import { escapeHtml } from '../iris/iris-sessions.js';
import { decideChallenge } from './tds-authentications.js';

// Framed by the merchant's tokenisation page: no X-Frame-Options, unlike the other pages.
const html = (reply: FastifyReply, status: number, page: string) =>
  reply
    .code(status)
    .headers({ 'cache-control': 'no-store' })
    .type('text/html; charset=utf-8')
    .send(page);

/**
 * The issuer's 3-D Secure challenge (plain HTTP on the page listener), as the tokenisation page
 * frames it:
 *   GET  /3ds/{tds}            the challenge: the card, and Approve / Refuse
 *   POST /3ds/{tds}/decision   {decision: approve|refuse} answers it (the card token is made on approve)
 */
export function registerTdsPages(server: FastifyInstance, card: CardSandbox): void {
  server.get('/3ds/:tds', async (request, reply) => {
    const { tds } = request.params as { tds: string };
    const book = card.ownerOf('tds', tds);
    const record = book?.tdsAuthentications.get(tds);
    if (!book || !record)
      return html(reply, 404, sandboxPage('Unknown authentication', '<p>No such card check.</p>'));
    if (record.status !== 'challenge')
      return html(
        reply,
        409,
        sandboxPage('Card check', '<p id="tds-status">This check is over.</p>'),
      );
    return html(
      reply,
      200,
      sandboxPage(
        'Your bank: confirm it is you',
        `<p>${escapeHtml(book.merchant.name)} asks to use your card ending <strong id="tds-card">${record.card.lastFour}</strong>.</p>
<form method="POST" action="/3ds/${record.token}/decision"><button type="submit" name="decision" value="approve" id="tds-approve">Approve</button><button type="submit" name="decision" value="refuse" id="tds-refuse">Refuse</button></form>`,
      ),
    );
  });

  server.post('/3ds/:tds/decision', async (request, reply) => {
    const { tds } = request.params as { tds: string };
    const decision = (request.body as { decision?: unknown } | undefined)?.decision;
    if (decision !== 'approve' && decision !== 'refuse')
      return html(reply, 400, sandboxPage('Card check', '<p>Approve or refuse.</p>'));
    const book = card.ownerOf('tds', tds);
    if (!book)
      return html(reply, 404, sandboxPage('Unknown authentication', '<p>No such card check.</p>'));
    const decided = card.act(book.merchant.id, (context) =>
      decideChallenge(context, tds, decision),
    );
    await card.persisted();
    if (decided instanceof CardError || typeof decided === 'string')
      return html(
        reply,
        409,
        sandboxPage('Card check', '<p id="tds-status">This check is over.</p>'),
      );
    return html(
      reply,
      200,
      sandboxPage(
        'Card check',
        `<p id="tds-status">${decided.status === 'authenticated' ? 'Approved' : 'Refused'}. You may return to the shop.</p>`,
      ),
    );
  });
}
