import type { FastifyInstance } from 'fastify';
import type { CardSandbox } from './card-sandbox.js';
import { registerMarketplaceControls } from './marketplace/marketplace-controls.js';

/** Ten years: the furthest one clock move may go. */
const MAX_ADVANCE_SECONDS = 10 * 365 * 86_400;

/**
 * The card side's controls on the sandbox control listener:
 *   POST /sandbox/card/merchants {name?}         a test merchant and its keys (201)
 *   POST /sandbox/card/clock {advanceSeconds}    moves the card side's clock forward (200 {now})
 *   GET  /sandbox/card/clock                     the card side's time ({now})
 */
export function registerCardControls(server: FastifyInstance, card: CardSandbox): void {
  server.post('/sandbox/card/merchants', async (request, reply) => {
    const body = (request.body ?? {}) as { name?: unknown };
    const name = body.name;
    if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > 120))
      return reply.code(400).send({ error: 'name must be a string of 1 to 120 characters' });
    const merchant = card.provisionMerchant(name);
    await card.persisted();
    return reply.code(201).send(merchant);
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
  registerMarketplaceControls(server, card);
}
