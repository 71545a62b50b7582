import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ConsentStatus } from './bank/consent-model.js';
import type { TransactionStatus } from './bank/payment-model.js';
import type { SandboxBank } from './bank/sandbox-bank.js';

const CONSENT_STATUSES: readonly ConsentStatus[] = [
  'received',
  'rejected',
  'partiallyAuthorised',
  'valid',
  'revokedByPsu',
  'expired',
  'terminatedByTpp',
];
const PAYMENT_STATUSES: readonly TransactionStatus[] = ['RCVD', 'ACTC', 'ACSC', 'RJCT'];

/** Another side of the sandbox (the card API) whose calls and reset the controls cover too. */
export interface SandboxSide {
  callCounts(): Record<string, number>;
  requestIdsOf(operationId: string): string[];
  reset(): void;
  persisted(): Promise<void>;
}

/**
 * The pages a person's browser opens for strong customer authentication (plain HTTP on loopback,
 * no client certificate), and the sandbox controls tests and demos use:
 *   POST /sandbox/consents/{consentId}/revoke  the user revokes a valid consent at the bank (204, 404)
 *   PATCH /sandbox/consents/{consentId} {status}  the bank's back office changes a consent (204, 404)
 *   DELETE /sandbox/consents/{consentId}       the bank forgets a consent (204, 404)
 *   PATCH /sandbox/payments/{paymentId} {status?, amount?}  the bank's back office settles, rejects or
 *                                              corrects a payment outside the TPP (204, 400, 404)
 *   DELETE /sandbox/payments/{paymentId}       the bank forgets a payment (204, 404)
 *   GET  /sandbox/calls                        API calls answered since start, by operationId (both APIs)
 *   GET  /sandbox/calls/{operationId}/request-ids  their X-Request-IDs, oldest first
 *   GET  /sandbox/tls-handshakes               TLS handshakes on the open-banking listener since start
 *   POST /sandbox/reset                        forget every consent, payment, authorisation, session,
 *                                              counter and booked payment, and every card payment,
 *                                              refund, token, customer and mandate (card merchants and
 *                                              their keys stay), in the store too (204)
 */
export function createScaServer(
  bankOf: () => SandboxBank,
  others: readonly SandboxSide[] = [],
): FastifyInstance {
  const server = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  void server.register(formbody);

  const sca = async (request: FastifyRequest, reply: FastifyReply) => {
    const bank = bankOf();
    const answer = bank.handleSca({
      method: request.method as 'GET' | 'POST',
      path: request.url.split('?')[0],
      query: request.query as Record<string, string | undefined>,
      form: (request.body ?? {}) as Record<string, string | string[] | undefined>,
    });
    await bank.persisted();
    reply.code(answer.status).headers({
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action *",
      ...answer.headers,
    });
    if (answer.body !== undefined) reply.type('text/html; charset=utf-8');
    return reply.send(answer.body);
  };
  server.get('/sca/*', sca);
  server.post('/sca/*', sca);

  server.post('/sandbox/consents/:consentId/revoke', async (request, reply) => {
    const { consentId } = request.params as { consentId: string };
    const bank = bankOf();
    const revoked = bank.control.revokeConsentAsPsu(consentId);
    await bank.persisted();
    return revoked ? reply.code(204).send() : reply.code(404).send({ error: 'no such consent' });
  });
  const acted = async (reply: FastifyReply, done: boolean, what: string) => {
    await bankOf().persisted();
    return done ? reply.code(204).send() : reply.code(404).send({ error: `no such ${what}` });
  };
  server.patch('/sandbox/consents/:consentId', async (request, reply) => {
    const { consentId } = request.params as { consentId: string };
    const status = (request.body as { status?: unknown } | undefined)?.status;
    if (typeof status !== 'string' || !CONSENT_STATUSES.includes(status as never))
      return reply
        .code(400)
        .send({ error: `status must be one of ${CONSENT_STATUSES.join(', ')}` });
    const change = { status: status as ConsentStatus };
    return acted(reply, bankOf().control.actOnConsent(consentId, change), 'consent');
  });
  server.delete('/sandbox/consents/:consentId', async (request, reply) => {
    const { consentId } = request.params as { consentId: string };
    return acted(reply, bankOf().control.actOnConsent(consentId, 'forget'), 'consent');
  });
  server.patch('/sandbox/payments/:paymentId', async (request, reply) => {
    const { paymentId } = request.params as { paymentId: string };
    const { status, amount } = (request.body ?? {}) as { status?: unknown; amount?: unknown };
    if (status !== undefined && !PAYMENT_STATUSES.includes(status as never))
      return reply
        .code(400)
        .send({ error: `status must be one of ${PAYMENT_STATUSES.join(', ')}` });
    if (
      amount !== undefined &&
      (typeof amount !== 'string' || !/^\d{1,12}(\.\d{1,2})?$/.test(amount))
    )
      return reply.code(400).send({ error: 'amount must be a decimal string such as "12.50"' });
    const change = { status: status as TransactionStatus | undefined, amount };
    return acted(reply, bankOf().control.actOnPayment(paymentId, change), 'payment');
  });
  server.delete('/sandbox/payments/:paymentId', async (request, reply) => {
    const { paymentId } = request.params as { paymentId: string };
    return acted(reply, bankOf().control.actOnPayment(paymentId, 'forget'), 'payment');
  });
  server.get('/sandbox/calls', async () =>
    Object.assign({}, bankOf().control.calls(), ...others.map((side) => side.callCounts())),
  );
  server.get<{ Params: { operationId: string } }>(
    '/sandbox/calls/:operationId/request-ids',
    async (request) => [
      ...bankOf().control.requestIds(request.params.operationId),
      ...others.flatMap((side) => side.requestIdsOf(request.params.operationId)),
    ],
  );
  server.post('/sandbox/reset', async (_request, reply) => {
    const bank = bankOf();
    bank.control.reset();
    for (const side of others) side.reset();
    await Promise.all([bank.persisted(), ...others.map((side) => side.persisted())]);
    return reply.code(204).send();
  });
  return server;
}
