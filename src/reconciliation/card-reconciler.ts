import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { And, IsNull, LessThan, MoreThanOrEqual, Not, type Repository } from 'typeorm';
import type { components } from '#src/generated/card.js';
import { ProblemException } from '../platform/errors/problem.js';
import { ProviderResource } from '../provider-ledger/provider-resource.entity.js';
import { CardStore, type CardRow } from '../card/store/card-store.service.js';
import type { RunContext } from './run-context.js';

type Payment = components['schemas']['Payment'];
type Refund = components['schemas']['Refund'];

/** The provider's largest page (card.yaml Count; its clients say 20). */
export const PROVIDER_PAGE = 20;

/** Portico's statuses of a row whose outcome at the provider is not settled yet. */
const IN_DOUBT = new Set(['creating', 'unknown']);

/**
 * Where a card payment may go from each status (lower case: the provider's clients spell `Pre
 * authorized`): a provider status reachable from Portico's means Portico is behind.
 */
const PAYMENT_MOVES: Record<string, readonly string[]> = {
  pending: [
    'pre authorized',
    'captured',
    'partially refunded',
    'refunded',
    'canceled',
    'expired',
    'failed',
  ],
  'pre authorized': ['captured', 'partially refunded', 'refunded', 'canceled', 'expired'],
  captured: ['partially refunded', 'refunded', 'disputed'],
  'partially refunded': ['refunded', 'disputed'],
};

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The values compared of a payment: status and amounts (amount, fee, refunded). */
const paymentValues = (status: string, amount: unknown, fee: unknown, refunded: unknown) => ({
  status,
  amount: typeof amount === 'number' ? amount : null,
  fee: typeof fee === 'number' ? fee : null,
  refunded: typeof refunded === 'number' ? refunded : null,
});

const refundValues = (status: string, amount: unknown, fee: unknown) => ({
  status,
  amount: typeof amount === 'number' ? amount : null,
  fee: typeof fee === 'number' ? fee : null,
});

/** Whether Portico knows a value and the provider's differs. */
const differs = (portico: number | null, provider: number | null) =>
  portico !== null && provider !== null && portico !== provider;

/**
 * Reconciles a tenant's card payments and refunds of a window: the provider's lists of the window's
 * days, page by page, against Portico's rows; Portico's rows of the window the lists did not show are
 * read by id.
 */
@Injectable()
export class CardReconciler {
  constructor(
    private readonly store: CardStore,
    @InjectRepository(ProviderResource) private readonly rows: Repository<ProviderResource>,
  ) {}

  async reconcile(context: RunContext): Promise<void> {
    await this.payments(context);
    await this.refunds(context);
  }

  private async payments(context: RunContext): Promise<void> {
    const seen = new Set<string>();
    for await (const item of this.list<'listPayments', Payment>(context, 'listPayments')) {
      if (seen.has(item.token)) continue;
      seen.add(item.token);
      const row = await this.owned(context, 'payment', item.token);
      if (row === null) continue;
      if (row) await this.comparePayment(context, row, item);
      else await this.adoptPayment(context, item);
    }
    for (const row of await this.unseen(context, 'payment', seen)) {
      const found = await this.read(context, 'retrievePayment', { paymentId: row.token! }, row);
      if (found) await this.comparePayment(context, row, found as Payment);
      else await this.porticoOnly(context, row, this.paymentOf(row));
    }
  }

  private async refunds(context: RunContext): Promise<void> {
    const seen = new Set<string>();
    for await (const item of this.list<'listRefunds', Refund>(context, 'listRefunds')) {
      if (seen.has(item.token)) continue;
      seen.add(item.token);
      const row = await this.owned(context, 'refund', item.token);
      if (row === null) continue;
      if (row) await this.compareRefund(context, row, item);
      else await this.adoptRefund(context, item);
    }
    for (const row of await this.unseen(context, 'refund', seen)) {
      const found = await this.read(context, 'retrieveRefund', { refundId: row.token! }, row);
      if (found) await this.compareRefund(context, row, found as Refund);
      else await this.porticoOnly(context, row, this.refundOf(row));
    }
  }

  /** Every item of the provider's list of the window's days, at the provider's largest page. */
  private async *list<O extends 'listPayments' | 'listRefunds', T>(
    context: RunContext,
    operation: O,
  ): AsyncGenerator<T> {
    const { tenantId, from, to } = context.window;
    for (let offset = 0; ; offset += PROVIDER_PAGE) {
      const query = { date_from: from, date_to: to, count: PROVIDER_PAGE, offset };
      const page = (await context.call(() =>
        this.store.call(tenantId, operation, { query } as never),
      )) as { items: T[] };
      await context.pageDone();
      yield* page.items;
      if (page.items.length < PROVIDER_PAGE) return;
    }
  }

  /**
   * The tenant's row of a provider id; null when another tenant holds it (two tenants on one merchant:
   * not this run's to judge).
   */
  private async owned<K extends 'payment' | 'refund'>(
    context: RunContext,
    kind: K,
    token: string,
  ): Promise<CardRow<K> | undefined | null> {
    try {
      return await this.store.owned(context.window.tenantId, kind, token);
    } catch (error) {
      if (error instanceof ProblemException && error.init.status === 404) return null;
      throw error;
    }
  }

  /** Portico's rows of the window (by Portico's creation time) with a provider id the list did not show. */
  private async unseen<K extends 'payment' | 'refund'>(
    context: RunContext,
    kind: K,
    seen: Set<string>,
  ): Promise<CardRow<K>[]> {
    const { tenantId, from, to } = context.window;
    const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000);
    const rows = await this.rows.find({
      where: {
        tenantId,
        kind,
        token: Not(IsNull()),
        status: Not('failed'),
        createdAt: And(MoreThanOrEqual(new Date(`${from}T00:00:00Z`)), LessThan(end)),
      },
      order: { createdAt: 'ASC' },
    });
    return rows.filter((row) => !seen.has(row.token!)) as CardRow<K>[];
  }

  /** A resource read by id: its answer, or undefined when the provider answers not found. */
  private async read(
    context: RunContext,
    operation: 'retrievePayment' | 'retrieveRefund',
    path: Record<string, string>,
    row: CardRow,
  ): Promise<unknown> {
    const answer = await context.call(() =>
      this.store.callRaw(context.window.tenantId, operation, { path } as never, row),
    );
    if (answer.status === 404) return undefined;
    if (answer.status >= 400) throw this.store.client.refusal(operation, answer);
    return answer.data;
  }

  private paymentOf(row: CardRow<'payment'>) {
    return paymentValues(row.status, row.amount, row.data?.fee_amount, row.data?.refund_amount);
  }

  private refundOf(row: CardRow<'refund'>) {
    return refundValues(row.status, row.amount, row.data?.fee_amount);
  }

  private async comparePayment(
    context: RunContext,
    row: CardRow<'payment'>,
    item: Payment,
  ): Promise<void> {
    const portico = this.paymentOf(row);
    const provider = paymentValues(item.status, item.amount, item.fee_amount, item.refund_amount);
    const flag = (driftClass: 'amount-differs' | 'portico-ahead') =>
      context.flag({
        kind: 'payment',
        driftClass,
        resourceId: row.id,
        token: item.token,
        portico,
        provider,
      });
    if (IN_DOUBT.has(row.status)) {
      await this.store.settle(row, item, item.status, 'reconciled');
      return context.count('moved');
    }
    if (differs(portico.amount, provider.amount)) return flag('amount-differs');
    if (same(row.status, item.status)) {
      // Refunded further at the provider in the same status (its fee following): Portico is behind.
      if (portico.refunded !== null && provider.refunded !== null) {
        if (provider.refunded < portico.refunded) return flag('portico-ahead');
        if (provider.refunded > portico.refunded) {
          await this.store.changed(row, item, 'reconciled');
          return context.count('moved');
        }
      }
      if (differs(portico.fee, provider.fee)) return flag('amount-differs');
      return context.count('matched');
    }
    // A move forward takes the provider's fee and refunded amount with it (a refund gives fee back).
    if (PAYMENT_MOVES[row.status.toLowerCase()]?.includes(item.status.toLowerCase())) {
      await this.store.settle(row, item, item.status, 'reconciled');
      return context.count('moved');
    }
    return flag('portico-ahead');
  }

  private async compareRefund(
    context: RunContext,
    row: CardRow<'refund'>,
    item: Refund,
  ): Promise<void> {
    const portico = this.refundOf(row);
    const provider = refundValues(item.status, item.amount, item.fee_amount);
    if (IN_DOUBT.has(row.status)) {
      await this.store.settle(row, item, item.status, 'reconciled');
      return context.count('moved');
    }
    const driftClass =
      differs(portico.amount, provider.amount) || differs(portico.fee, provider.fee)
        ? 'amount-differs'
        : // A refund is final when made (Captured or Failed): any other status is not Portico's to follow.
          !same(row.status, item.status)
          ? 'portico-ahead'
          : undefined;
    if (!driftClass) return context.count('matched');
    return context.flag({
      kind: 'refund',
      driftClass,
      resourceId: row.id,
      token: item.token,
      portico,
      provider,
    });
  }

  private porticoOnly(
    context: RunContext,
    row: CardRow,
    portico: Record<string, unknown>,
  ): Promise<void> {
    return context.flag({
      kind: row.kind,
      driftClass: 'portico-only',
      resourceId: row.id,
      token: row.token,
      portico,
      provider: null,
    });
  }

  /**
   * A payment made outside Portico (or never recorded) becomes a row of origin `provider`. One whose
   * merchant_ref a Portico row in doubt holds is that row's (the resolver settles it): not adopted.
   * The provider id's unique index makes a second adoption (another replica, a run started again)
   * fail: that row is then compared.
   */
  private async adoptPayment(context: RunContext, item: Payment): Promise<void> {
    const { tenantId } = context.window;
    if (item.merchant_ref && (await this.store.liveByMerchantRef(tenantId, item.merchant_ref)))
      return context.count('in-doubt');
    const row = await this.begin(context, 'payment', {
      token: item.token,
      merchantRef: item.merchant_ref ?? null,
      amount: item.amount,
    });
    if (!row) {
      const held = await this.owned(context, 'payment', item.token);
      return held ? this.comparePayment(context, held, item) : undefined;
    }
    await this.store.settle(row, item, item.status, 'found-at-provider');
    context.count('adopted');
  }

  /** A refund made outside Portico; while a refund of its payment is in doubt at Portico, that one's. */
  private async adoptRefund(context: RunContext, item: Refund): Promise<void> {
    const { tenantId } = context.window;
    const inDoubt = await this.rows.countBy({
      tenantId,
      kind: 'refund',
      parentToken: item.payment,
      token: IsNull(),
      status: Not('failed'),
    });
    if (inDoubt > 0) return context.count('in-doubt');
    const row = await this.begin(context, 'refund', {
      token: item.token,
      parentToken: item.payment,
      amount: item.amount,
    });
    if (!row) {
      const held = await this.owned(context, 'refund', item.token);
      return held ? this.compareRefund(context, held, item) : undefined;
    }
    await this.store.settle(row, item, item.status, 'found-at-provider');
    context.count('adopted');
  }

  /** A row of origin `provider`, or undefined when its provider id (or merchant_ref) is held already. */
  private async begin<K extends 'payment' | 'refund'>(
    context: RunContext,
    kind: K,
    fields: { token: string; merchantRef?: string | null; parentToken?: string; amount: number },
  ): Promise<CardRow<K> | undefined> {
    try {
      return await this.store.begin(context.window.tenantId, kind, {
        ...fields,
        origin: 'provider',
      });
    } catch (error) {
      // CardStore.begin answers a unique index's refusal as 409.
      if (error instanceof ProblemException && error.init.status === 409) return undefined;
      throw error;
    }
  }
}
