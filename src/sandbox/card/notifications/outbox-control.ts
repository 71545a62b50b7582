import type { FastifyInstance } from 'fastify';
import type { CardSandbox } from '../card-sandbox.js';
import { timestamp } from '../card-views.js';

/**
 *   GET /sandbox/card/merchants/{merchantId}/outbox   the e-mails the sandbox "sent" for the
 *                                                     merchant's notifications, most recent first
 */
export function registerOutboxControl(server: FastifyInstance, card: CardSandbox): void {
  server.get('/sandbox/card/merchants/:merchantId/outbox', async (request, reply) => {
    const { merchantId } = request.params as { merchantId: string };
    const book = card.merchantBook(merchantId);
    if (!book) return reply.code(404).send({ error: 'no such merchant' });
    const items = [...book.mails.values()]
      .sort((a, b) => b.seq - a.seq)
      .map((mail) => ({
        to: mail.to,
        subject: mail.subject,
        locale: mail.locale,
        notification: mail.notification,
        link: mail.link,
        sent_at: timestamp(mail.created),
      }));
    return { total_count: items.length, items };
  });
}
