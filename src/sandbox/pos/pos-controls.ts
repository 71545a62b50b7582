import type { FastifyInstance } from 'fastify';
import { terminalView } from './pos-views.js';
import type { PosSandbox } from './pos-sandbox.js';

const ACTIONS = ['approve', 'decline', 'cancel'];

/**
 * The POS side's controls on the sandbox control listener:
 *   POST  /sandbox/pos/merchants {merchantId}               the card merchant's POS key (201; the same again)
 *   POST  /sandbox/pos/merchants/{merchantId}/terminals     terminals from a fixture (201 {terminals})
 *   GET   /sandbox/pos/terminals/{token}                    a terminal with its fixture and current payment
 *   PATCH /sandbox/pos/terminals/{token}                    changes connected, status, busy, outcome, holdMs
 *   POST  /sandbox/pos/terminals/{token}/payer {action}     the payer approves, declines or cancels (200)
 *   POST  /sandbox/pos/terminals/{token}/close-batch        settles the open batch (200 {closedBatch})
 * The clock is the card side's (POST /sandbox/card/clock).
 */
export function registerPosControls(server: FastifyInstance, pos: PosSandbox): void {
  const fail = (status: number, error: string) => ({ status, error });
  server.post('/sandbox/pos/merchants', async (request, reply) => {
    const merchantId = (request.body as { merchantId?: unknown } | undefined)?.merchantId;
    if (typeof merchantId !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(merchantId))
      return reply.code(400).send(fail(400, 'merchantId must be a card merchant id'));
    const merchant = pos.provisionMerchant(merchantId);
    await pos.persisted();
    return reply.code(201).send(merchant);
  });
  server.post('/sandbox/pos/merchants/:merchantId/terminals', async (request, reply) => {
    const { merchantId } = request.params as { merchantId: string };
    const made = pos.addTerminals(merchantId, (request.body ?? {}) as Record<string, unknown>);
    if (typeof made === 'string') return reply.code(400).send(fail(400, made));
    await pos.persisted();
    return reply.code(201).send({ terminals: made });
  });
  server.get('/sandbox/pos/terminals/:token', async (request, reply) => {
    const terminal = pos.terminal((request.params as { token: string }).token);
    if (!terminal) return reply.code(404).send(fail(404, 'no such terminal'));
    return {
      ...terminalView(terminal),
      connected: terminal.connected,
      busy: terminal.busy,
      erpLinked: terminal.erpLinked,
      outcome: terminal.outcome,
      holdMs: terminal.holdMs,
      openBatch: terminal.batch,
      currentTransaction: terminal.current ?? null,
    };
  });
  server.patch('/sandbox/pos/terminals/:token', async (request, reply) => {
    const changed = pos.changeTerminal(
      (request.params as { token: string }).token,
      (request.body ?? {}) as Record<string, unknown>,
    );
    if (typeof changed === 'string') return reply.code(400).send(fail(400, changed));
    return terminalView(changed);
  });
  server.post('/sandbox/pos/terminals/:token/payer', async (request, reply) => {
    const action = (request.body as { action?: unknown } | undefined)?.action;
    if (typeof action !== 'string' || !ACTIONS.includes(action))
      return reply.code(400).send(fail(400, `action must be one of ${ACTIONS.join(', ')}`));
    const acted = pos.payer(
      (request.params as { token: string }).token,
      action as 'approve' | 'decline' | 'cancel',
    );
    if (typeof acted === 'string') return reply.code(409).send(fail(409, acted));
    return { transactionId: acted.transactionId, status: acted.status };
  });
  server.post('/sandbox/pos/terminals/:token/close-batch', async (request, reply) => {
    const closed = pos.closeBatch((request.params as { token: string }).token);
    if (typeof closed === 'string') return reply.code(404).send(fail(404, closed));
    return { closedBatch: closed };
  });
}
