import type { FastifyInstance, FastifyReply } from 'fastify';
import { CardError, type CardAnswer, type CardContext } from './card-context.js';
import { createPayment, feeOf, knownPayment, viewPayment } from './card-payments.js';
import { createRefund } from './card-refunds.js';
import type { CardSandbox } from './card-sandbox.js';

/** The card a dashboard payment charges unless another is named (a seed test card that succeeds). */
const DASHBOARD_CARD = '4556390755719395';

type Body = Record<string, unknown>;

/**
 * What a merchant does in the provider's dashboard, outside any API client, on the control listener
 * (never counted among the API's calls):
 *   POST /sandbox/card/merchants/:merchantId/dashboard/payments {amount, capture?, merchantRef?,
 *        description?, cardNumber?}                a payment made at the provider (200: the payment)
 *   POST /sandbox/card/merchants/:merchantId/dashboard/refunds {payment, amount?}
 *                                                   a refund made at the provider (200: the refund)
 *   POST /sandbox/card/merchants/:merchantId/dashboard/payments/:paymentId/amount {amount}
 *                                                   the provider's correction of a payment's amount (its
 *                                                   fee follows; 200: the payment)
 *   POST /sandbox/card/merchants/:merchantId/dashboard/operations/:operationId {params?, body?}
 *                                                   any other write of the card API made in the dashboard
 *                                                   (createCustomer, deleteCustomer, createSeller,
 *                                                   createTransfer, createReversal, cancelNotification, …;
 *                                                   `params` its path's, `body` its form as card.yaml names
 *                                                   it): the API's answer (404 for a read or no operation)
 * A pre-authorisation lapses with the clock (POST /sandbox/card/clock past its 7 days); a hosted payment
 * link is paid on its page (POST /pay/:pnt) and expires with the clock; a seller's status is the
 * provider's decision (POST /sandbox/card/marketplace/sellers/:sellerId/status); payouts are made and
 * deposited by the payout run (POST /sandbox/card/marketplace/payouts/run).
 */
export function registerDashboardControls(server: FastifyInstance, card: CardSandbox): void {
  const answered = async (reply: FastifyReply, answer: CardAnswer | CardError) => {
    await card.persisted();
    if (answer instanceof CardError)
      return reply
        .code(answer.status)
        .send({ error: { status: answer.status, code: answer.code } });
    return reply.code(answer.status).send(answer.body);
  };
  const run = (
    reply: FastifyReply,
    merchantId: string,
    change: (context: CardContext) => CardAnswer,
  ) => {
    if (!card.merchantBook(merchantId)) return reply.code(404).send({ error: 'no such merchant' });
    return answered(reply, card.act(merchantId, change));
  };
  const amountOf = (body: Body, required: boolean): number | undefined | string => {
    const amount = body.amount;
    if (amount === undefined && !required) return undefined;
    return Number.isInteger(amount) && (amount as number) >= 30 && (amount as number) <= 99_999_999
      ? (amount as number)
      : 'amount must be an integer number of cents from 30 to 99999999';
  };

  server.post('/sandbox/card/merchants/:merchantId/dashboard/payments', async (request, reply) => {
    const { merchantId } = request.params as { merchantId: string };
    const body = (request.body ?? {}) as Body;
    const amount = amountOf(body, true);
    if (typeof amount === 'string') return reply.code(400).send({ error: amount });
    const form: Body = {
      amount,
      card_number: typeof body.cardNumber === 'string' ? body.cardNumber : DASHBOARD_CARD,
      expiration_month: '12',
      expiration_year: String(card.now().getUTCFullYear() + 3),
      holder_name: 'Dashboard Payer',
      cvv: '123',
      capture: body.capture === false ? 0 : 1,
      ...(typeof body.merchantRef === 'string' ? { merchant_ref: body.merchantRef } : {}),
      ...(typeof body.description === 'string' ? { description: body.description } : {}),
    };
    return run(reply, merchantId, (context) =>
      createPayment(context, { operationId: 'createPayment', params: {}, query: {}, body: form }),
    );
  });

  server.post('/sandbox/card/merchants/:merchantId/dashboard/refunds', async (request, reply) => {
    const { merchantId } = request.params as { merchantId: string };
    const body = (request.body ?? {}) as Body;
    const amount = amountOf(body, false);
    if (typeof amount === 'string') return reply.code(400).send({ error: amount });
    if (typeof body.payment !== 'string')
      return reply.code(400).send({ error: 'payment must be a payment id (pmt_…)' });
    const form: Body = { payment: body.payment, ...(amount === undefined ? {} : { amount }) };
    return run(reply, merchantId, (context) =>
      createRefund(context, { operationId: 'createRefund', params: {}, query: {}, body: form }),
    );
  });

  server.post(
    '/sandbox/card/merchants/:merchantId/dashboard/payments/:paymentId/amount',
    async (request, reply) => {
      const { merchantId, paymentId } = request.params as { merchantId: string; paymentId: string };
      const amount = amountOf((request.body ?? {}) as Body, true);
      if (typeof amount !== 'number') return reply.code(400).send({ error: amount });
      return run(reply, merchantId, (context) => {
        const payment = knownPayment(context, paymentId);
        if (amount < payment.refundAmount) throw new CardError(400, 40007, amount, payment.token);
        payment.amount = amount;
        payment.fee = feeOf(amount);
        context.state.put(context.book, 'payment', payment);
        return { status: 200, body: viewPayment(context, payment) };
      });
    },
  );

  server.post(
    '/sandbox/card/merchants/:merchantId/dashboard/operations/:operationId',
    async (request, reply) => {
      const { merchantId, operationId } = request.params as {
        merchantId: string;
        operationId: string;
      };
      if (!card.merchantBook(merchantId))
        return reply.code(404).send({ error: 'no such merchant' });
      const body = (request.body ?? {}) as { params?: unknown; body?: unknown };
      const isObject = (value: unknown) =>
        value === undefined || (typeof value === 'object' && value !== null);
      if (!isObject(body.params) || !isObject(body.body))
        return reply.code(400).send({ error: 'params and body must be objects' });
      const answer = card.dashboard(merchantId, {
        operationId,
        params: (body.params ?? {}) as Record<string, string>,
        query: {},
        body: (body.body ?? {}) as Body,
      });
      if (!answer) return reply.code(404).send({ error: `no write ${operationId} in card.yaml` });
      return answered(reply, answer);
    },
  );
}
