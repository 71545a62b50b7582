import type { FastifyInstance } from 'fastify';
import { ANSWER_STYLES } from './answer-style.js';
import type { CardSandbox } from './card-sandbox.js';
import { registerDashboardControls } from './dashboard-controls.js';
import { registerMarketplaceControls } from './marketplace/marketplace-controls.js';

/** Ten years: the furthest one clock move may go. */
const MAX_ADVANCE_SECONDS = 10 * 365 * 86_400;

/**
 * The card side's controls on the sandbox control listener:
 *   POST /sandbox/card/merchants {name?, type?}  a test merchant and its keys (201); type standard or
 *                                                3dsecure (card arguments only through 3-D Secure)
 *   POST /sandbox/card/clock {advanceSeconds}    moves the card side's clock forward (200 {now})
 *   GET  /sandbox/card/clock                     the card side's time ({now})
 *   POST /sandbox/card/answer-style {style, merchantId?}
 *                                                how answers spell what the seed and the provider's
 *                                                clients differ on: `seed` or `provider-clients`, for
 *                                                one merchant or every merchant there is (200 {style, merchants})
 */
export function registerCardControls(server: FastifyInstance, card: CardSandbox): void {
  server.post('/sandbox/card/merchants', async (request, reply) => {
    const body = (request.body ?? {}) as { name?: unknown; type?: unknown };
    const name = body.name;
    if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > 120))
      return reply.code(400).send({ error: 'name must be a string of 1 to 120 characters' });
    const type = body.type ?? 'standard';
    if (type !== 'standard' && type !== '3dsecure')
      return reply.code(400).send({ error: 'type must be standard or 3dsecure' });
    const merchant = card.provisionMerchant(name as string | undefined, type);
    await card.persisted();
    return reply.code(201).send({ ...merchant, type });
  });
  server.get('/sandbox/card/clock', async () => ({ now: card.now().toISOString() }));
  server.post('/sandbox/card/clock', async (request, reply) => {
    const seconds = (request.body as { advanceSeconds?: unknown } | undefined)?.advanceSeconds;
    if (
      typeof seconds !== 'number' ||
      !Number.isFinite(seconds) ||
      seconds < 0 ||
      seconds > MAX_ADVANCE_SECONDS
    )
      return reply
        .code(400)
        .send({ error: `advanceSeconds must be a number from 0 to ${MAX_ADVANCE_SECONDS}` });
    const now = card.advanceClock(seconds);
    await card.persisted();
    return reply.code(200).send({ now: now.toISOString() });
  });
  server.post('/sandbox/card/answer-style', async (request, reply) => {
    const body = (request.body ?? {}) as { style?: unknown; merchantId?: unknown };
    const style = ANSWER_STYLES.find((candidate) => candidate === body.style);
    if (!style)
      return reply.code(400).send({ error: `style must be one of ${ANSWER_STYLES.join(', ')}` });
    if (body.merchantId !== undefined && typeof body.merchantId !== 'string')
      return reply.code(400).send({ error: 'merchantId must be a string' });
    const changed = card.forMerchants((context) => {
      context.book.merchant.answerStyle = style;
      context.state.touchMerchant(context.book.merchant);
    }, body.merchantId);
    if (body.merchantId !== undefined && changed.length === 0)
      return reply.code(404).send({ error: `no merchant ${body.merchantId}` });
    await card.persisted();
    return reply.code(200).send({ style, merchants: changed.length });
  });
  registerMarketplaceControls(server, card);
  registerDashboardControls(server, card);
}
