import type { FastifyInstance } from 'fastify';
import type { CardSandbox } from '../card-sandbox.js';
import type { IrisMessenger } from './iris-delivery.js';
import type { IrisArrivalOrder } from './iris-record.js';

const ORDERS: readonly IrisArrivalOrder[] = [
  'callback-webhook',
  'webhook-callback',
  'webhook-only',
];
const MAX_COPIES = 3;

/**
 * The IRIS side's controls on the sandbox control listener:
 *   PUT  /sandbox/card/merchants/{merchantId}/webhook  {url|null}  the merchant's registered webhook
 *   PUT  /sandbox/card/iris/sessions/{src}/delivery    {order, copies?, holdMs?}  how the result arrives:
 *        order callback-webhook (default; the webhook waits until released or 1 s), webhook-callback,
 *        webhook-only (the payer never comes back); copies 1-3 of each message; holdMs 0-60000
 *   POST /sandbox/card/iris/sessions/{src}/release     sends a held webhook now ({released})
 *   GET  /sandbox/card/iris/sessions/{src}/webhooks    the webhook attempts made, with their answers
 */
export function registerIrisControls(
  server: FastifyInstance,
  card: CardSandbox,
  messenger: IrisMessenger,
): void {
  server.put('/sandbox/card/merchants/:merchantId/webhook', async (request, reply) => {
    const { merchantId } = request.params as { merchantId: string };
    const url = (request.body as { url?: unknown } | undefined)?.url;
    if (url !== null && (typeof url !== 'string' || !/^https?:\/\/\S+$/.test(url)))
      return reply.code(400).send({ error: 'url must be an http(s) URL or null' });
    if (!card.setWebhook(merchantId, url))
      return reply.code(404).send({ error: 'no such merchant' });
    await card.persisted();
    return reply.code(204).send();
  });

  server.put('/sandbox/card/iris/sessions/:src/delivery', async (request, reply) => {
    const { src } = request.params as { src: string };
    const body = (request.body ?? {}) as { order?: unknown; copies?: unknown; holdMs?: unknown };
    const copies = body.copies ?? 1;
    const holdMs = body.holdMs ?? 1_000;
    if (!ORDERS.includes(body.order as IrisArrivalOrder))
      return reply.code(400).send({ error: `order must be one of ${ORDERS.join(', ')}` });
    if (
      typeof copies !== 'number' ||
      !Number.isInteger(copies) ||
      copies < 1 ||
      copies > MAX_COPIES
    )
      return reply.code(400).send({ error: `copies must be an integer from 1 to ${MAX_COPIES}` });
    if (typeof holdMs !== 'number' || !Number.isInteger(holdMs) || holdMs < 0 || holdMs > 60_000)
      return reply.code(400).send({ error: 'holdMs must be an integer from 0 to 60000' });
    if (!card.planDelivery(src, { order: body.order as IrisArrivalOrder, copies, holdMs }))
      return reply.code(404).send({ error: 'no such session' });
    await card.persisted();
    return reply.code(204).send();
  });

  server.post('/sandbox/card/iris/sessions/:src/release', async (request) => ({
    released: messenger.release((request.params as { src: string }).src),
  }));

  server.get('/sandbox/card/iris/sessions/:src/webhooks', async (request) => ({
    attempts: messenger.attemptsOf((request.params as { src: string }).src),
  }));
}
