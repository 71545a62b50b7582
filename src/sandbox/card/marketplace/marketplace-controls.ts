import type { FastifyInstance } from 'fastify';
import type { CardSandbox } from '../card-sandbox.js';
import { ledgerViolations } from './invariants.js';
import { marketOf } from './ledger.js';
import type { SellerStatus } from './market-records.js';
import { runPayouts } from './payouts.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const STATUSES: readonly SellerStatus[] = ['Authorized', 'Suspended', 'Closed'];

/**
 * The marketplace's controls on the sandbox control listener:
 *   POST /sandbox/card/marketplace/payouts/run {date?, merchantId?}   runs the payout scheduler for a
 *        day (default the sandbox clock's), moving the clock forward to it (200 {date, deposited, created})
 *   POST /sandbox/card/marketplace/options {merchantId, transferAboveRemaining}   the account option
 *   POST /sandbox/card/marketplace/sellers/:sellerId/status {status}  the provider's seller decisions
 *   GET  /sandbox/card/marketplace/invariants?merchantId=            the ledger check ({ok, violations})
 */
export function registerMarketplaceControls(server: FastifyInstance, card: CardSandbox): void {
  const known = (merchantId: unknown) =>
    typeof merchantId === 'string' && card.forMerchants(() => true, merchantId).length === 1;

  server.post('/sandbox/card/marketplace/payouts/run', async (request, reply) => {
    const body = (request.body ?? {}) as { date?: unknown; merchantId?: unknown };
    const today = card.now().toISOString().slice(0, 10);
    const date = body.date ?? today;
    if (
      typeof date !== 'string' ||
      !DAY.test(date) ||
      Number.isNaN(Date.parse(date)) ||
      date < today
    )
      return reply
        .code(400)
        .send({ error: `date must be a YYYY-MM-DD day, not before the sandbox's ${today}` });
    if (body.merchantId !== undefined && !known(body.merchantId))
      return reply.code(404).send({ error: 'no such merchant' });
    if (date > today)
      card.advanceClock((Date.parse(`${date}T00:00:00Z`) - card.now().getTime()) / 1000);
    const runs = card.forMerchants(
      (context) => runPayouts(context, date),
      body.merchantId as string | undefined,
    );
    await card.persisted();
    return reply.code(200).send({
      date,
      now: card.now().toISOString(),
      deposited: runs.flatMap((run) => run.deposited),
      created: runs.flatMap((run) => run.created),
    });
  });

  server.post('/sandbox/card/marketplace/options', async (request, reply) => {
    const body = (request.body ?? {}) as { merchantId?: unknown; transferAboveRemaining?: unknown };
    if (typeof body.transferAboveRemaining !== 'boolean')
      return reply.code(400).send({ error: 'transferAboveRemaining must be a boolean' });
    if (!known(body.merchantId)) return reply.code(404).send({ error: 'no such merchant' });
    const [market] = card.forMerchants((context) => {
      const record = marketOf(context);
      record.transferAboveRemaining = body.transferAboveRemaining as boolean;
      context.state.put(context.book, 'market', record);
      return { transferAboveRemaining: record.transferAboveRemaining };
    }, body.merchantId as string);
    await card.persisted();
    return reply.code(200).send(market);
  });

  server.post('/sandbox/card/marketplace/sellers/:sellerId/status', async (request, reply) => {
    const { sellerId } = request.params as { sellerId: string };
    const status = ((request.body ?? {}) as { status?: unknown }).status as SellerStatus;
    if (!STATUSES.includes(status))
      return reply.code(400).send({ error: `status must be one of ${STATUSES.join(', ')}` });
    const found = card.forMerchants((context) => {
      const seller = context.book.sellers.get(sellerId);
      if (!seller) return undefined;
      if (seller.status === 'Closed' && status !== 'Closed') return 'closed' as const;
      seller.status = status;
      seller.modified = context.now.toISOString();
      context.state.put(context.book, 'seller', seller);
      return seller.status;
    });
    const outcome = found.find((value) => value !== undefined);
    await card.persisted();
    if (outcome === undefined) return reply.code(404).send({ error: 'no such seller' });
    if (outcome === 'closed')
      return reply.code(409).send({ error: 'a Closed seller stays closed' });
    return reply.code(200).send({ status: outcome });
  });

  server.get('/sandbox/card/marketplace/invariants', async (request, reply) => {
    const { merchantId } = request.query as { merchantId?: string };
    if (merchantId !== undefined && !known(merchantId))
      return reply.code(404).send({ error: 'no such merchant' });
    const violations = card
      .forMerchants(
        (context) => ledgerViolations(context).map((v) => `${context.book.merchant.id}: ${v}`),
        merchantId,
      )
      .flat();
    await card.persisted();
    return reply.code(200).send({ ok: violations.length === 0, violations });
  });
}
