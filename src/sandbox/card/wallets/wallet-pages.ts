import type { FastifyInstance, FastifyReply } from 'fastify';
import { CardError } from '../card-context.js';
import type { CardSandbox } from '../card-sandbox.js';
import { TOKEN_LIFETIME_MS } from '../card-sources.js';
import { callbackPage, sandboxPage } from '../iris/iris-pages-html.js';
import { escapeHtml } from '../iris/iris-sessions.js';
import { sandboxWalletToken } from './wallet-token.js';
import { issueWalletCardToken, walletResult } from './wallets.js';

const html = (reply: FastifyReply, status: number, page: string) =>
  reply
    .code(status)
    .headers({ 'cache-control': 'no-store', 'x-frame-options': 'DENY' })
    .type('text/html; charset=utf-8')
    .send(page);

const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

/**
 * The PAN-only web-wallet page (plain HTTP on the page listener), where the payer completes 3-D Secure:
 *   GET|POST /webwallet/{wlt}               the page (the tokenisation's form posts here)
 *   POST     /webwallet/{wlt}/authenticate  makes the card token and answers the page that posts
 *                                           token, md and hash to the merchant's callback_url
 * A tokenisation waits for the payer 15 minutes (the card token's lifetime). And a control:
 *   POST /sandbox/card/wallet-tokens {authMethod, cardNumber?, expiresInSeconds?}  a sandbox wallet token
 *                                           (what a checkout gets from the wallet provider), expiring
 *                                           on the sandbox clock (default 10 minutes)
 */
export function registerWalletPages(server: FastifyInstance, card: CardSandbox): void {
  const walletOf = (id: string) => {
    const book = card.ownerOf('wallet', id);
    const wallet = book?.wallets.get(id);
    return book && wallet ? { book, wallet } : undefined;
  };
  const waiting = (created: string) =>
    card.now().getTime() - new Date(created).getTime() < TOKEN_LIFETIME_MS;

  const page = async (request: { params: unknown; body: unknown }, reply: FastifyReply) => {
    const { wlt } = request.params as { wlt: string };
    const found = walletOf(wlt);
    if (!found) return html(reply, 404, sandboxPage('Unknown payment', '<p>No such payment.</p>'));
    const pk = (request.body as { pk?: unknown } | undefined)?.pk;
    if (pk !== undefined && pk !== found.book.merchant.publicKey)
      return html(reply, 400, sandboxPage('Refused', '<p>The form is not this merchant’s.</p>'));
    const { wallet } = found;
    if (wallet.status !== 'pending' || !waiting(wallet.created))
      return html(
        reply,
        409,
        sandboxPage('Wallet payment', '<p id="webwallet-status">This payment is over.</p>'),
      );
    return html(
      reply,
      200,
      sandboxPage(
        'Sandbox 3-D Secure',
        `<p>Confirm <strong id="webwallet-amount">${euros(wallet.amount)}</strong> to ${escapeHtml(found.book.merchant.name)} with your card ending ${wallet.card.lastFour}.</p>
<form method="POST" action="/webwallet/${wallet.token}/authenticate"><button type="submit" id="webwallet-authenticate">Authenticate</button></form>`,
      ),
    );
  };
  server.get('/webwallet/:wlt', page);
  server.post('/webwallet/:wlt', page);

  server.post('/sandbox/card/wallet-tokens', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const authMethod = body.authMethod ?? 'CRYPTOGRAM_3DS';
    const seconds = body.expiresInSeconds ?? 600;
    const pan = body.cardNumber ?? '4111111111111111';
    if (
      (authMethod !== 'CRYPTOGRAM_3DS' && authMethod !== 'PAN_ONLY') ||
      typeof seconds !== 'number' ||
      !Number.isInteger(seconds) ||
      Math.abs(seconds) > 86_400 ||
      typeof pan !== 'string' ||
      !/^\d{12,19}$/.test(pan)
    )
      return reply.code(400).send({
        error:
          'authMethod CRYPTOGRAM_3DS|PAN_ONLY, cardNumber 12-19 digits, expiresInSeconds integer',
      });
    const expiresAt = card.now().getTime() + seconds * 1000;
    return reply
      .code(201)
      .send({ token: sandboxWalletToken({ authMethod, pan, expiresAt }), expiresAt });
  });

  server.post('/webwallet/:wlt/authenticate', async (request, reply) => {
    const { wlt } = request.params as { wlt: string };
    const found = walletOf(wlt);
    if (!found) return html(reply, 404, sandboxPage('Unknown payment', '<p>No such payment.</p>'));
    const made = card.act(found.book.merchant.id, (context) => {
      const wallet = context.book.wallets.get(wlt);
      if (!wallet || wallet.status !== 'pending' || !waiting(wallet.created)) return undefined;
      const cardToken = issueWalletCardToken(context, wallet);
      return { wallet, fields: walletResult(context.book.merchant.secretKey, wallet, cardToken) };
    });
    await card.persisted();
    if (!made || made instanceof CardError)
      return html(
        reply,
        409,
        sandboxPage('Wallet payment', '<p id="webwallet-status">This payment is over.</p>'),
      );
    return html(reply, 200, callbackPage(made.wallet.callbackUrl, made.fields, 1));
  });
}
