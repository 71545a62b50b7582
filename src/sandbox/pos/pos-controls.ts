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
 *   PATCH /sandbox/pos/transactions/{id} {status?, amount?} the provider changes a decided transaction
 *                                                           outside the merchant (CAPTURED, FAILED; 204)
 *   DELETE /sandbox/pos/transactions/{id}                   the provider loses a transaction (204)
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
  server.patch('/sandbox/pos/transactions/:transactionId', async (request, reply) => {
    const { status, amount } = (request.body ?? {}) as { status?: unknown; amount?: unknown };
    if (status !== undefined && status !== 'CAPTURED' && status !== 'FAILED')
      return reply.code(400).send(fail(400, 'status must be CAPTURED or FAILED'));
    if (amount !== undefined && (!Number.isInteger(amount) || (amount as number) < 1))
      return reply.code(400).send(fail(400, 'amount must be a positive integer (cents)'));
    const acted = pos.actOnTransaction(
      (request.params as { transactionId: string }).transactionId,
      {
        status,
        amount: amount as number | undefined,
      },
    );
    if (typeof acted === 'string') return reply.code(404).send(fail(404, acted));
    await pos.persisted();
    return reply.code(204).send();
  });
  server.delete('/sandbox/pos/transactions/:transactionId', async (request, reply) => {
    const { transactionId } = request.params as { transactionId: string };
    const acted = pos.actOnTransaction(transactionId, 'forget');
    if (typeof acted === 'string') return reply.code(404).send(fail(404, acted));
    await pos.persisted();
    return reply.code(204).send();
  });
  server.post('/sandbox/pos/terminals/:token/close-batch', async (request, reply) => {
    const closed = pos.closeBatch((request.params as { token: string }).token);
    if (typeof closed === 'string') return reply.code(404).send(fail(404, closed));
    return { closedBatch: closed };
  });
}
