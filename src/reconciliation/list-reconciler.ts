import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { And, In, IsNull, LessThan, MoreThanOrEqual, Not, type Repository } from 'typeorm';
import type { JsonObject } from '../platform/common/json.js';
import { ProblemException } from '../platform/errors/problem.js';
import { ProviderResource } from '../provider-ledger/provider-resource.entity.js';
import { CardStore, type CardRow } from '../card/store/card-store.service.js';
import type { Item, ListKind } from './list-kinds.js';
import type { RunContext } from './run-context.js';

/** The provider's largest page (card.yaml Count; its clients say 20). */
export const PROVIDER_PAGE = 20;

/** Portico's statuses of a row whose outcome at the provider is not settled yet. */
const IN_DOUBT = new Set(['creating', 'unknown']);

type Values = { status: string } & Record<string, number | string | null>;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Whether Portico knows a value and the provider's differs. */
const differs = (portico: unknown, provider: unknown) =>
  portico !== null && provider !== null && portico !== provider;

/** The values compared of a resource of a kind: its status and the kind's fields (numbers). */
const valuesOf = (kind: ListKind, status: string, data: Record<string, unknown>): Values => {
  const values: Values = { status };
  for (const [name, field] of Object.entries(kind.fields))
    values[name] = typeof data[field] === 'number' ? data[field] : null;
  return values;
};

/**
 * Reconciles a tenant's resources of the provider's lists (card payments and refunds, customers,
 * notifications, the marketplace's sellers, transfers, reversals and payouts), one kind at a time as
 * its ListKind describes it: the provider's list of the window's days, page by page, against Portico's
 * rows; Portico's rows of the window the list did not show are read by id.
 */
@Injectable()
export class ListReconciler {
  constructor(
    private readonly store: CardStore,
    @InjectRepository(ProviderResource) private readonly rows: Repository<ProviderResource>,
  ) {}

  async reconcile(context: RunContext, kinds: readonly ListKind[]): Promise<void> {
    for (const kind of kinds) await this.reconcileKind(context, kind);
  }

  private async reconcileKind(context: RunContext, kind: ListKind): Promise<void> {
    const seen = new Set<string>();
    for await (const page of this.list(context, kind)) {
      const items = page.filter((item) => !seen.has(item.token));
      for (const item of items) seen.add(item.token);
      const held = await this.held(context, kind, items);
      for (const item of items) {
        const row = held.get(item.token);
        if (row === null) continue;
        if (row) await this.compare(context, kind, row, item);
        else await this.adopt(context, kind, item);
      }
    }
    for (const row of await this.unseen(context, kind, seen)) {
      const found = await this.read(context, kind, row);
      if (found) await this.compare(context, kind, row, found);
      else
        await context.flag({
          kind: row.kind,
          driftClass: 'portico-only',
          resourceId: row.id,
          token: row.token,
          portico: this.porticoValues(kind, row),
          provider: null,
        });
    }
  }

  /** Every page of the provider's list of the window's days, at the provider's largest page. */
  private async *list(context: RunContext, kind: ListKind): AsyncGenerator<Item[]> {
    const { tenantId, from, to } = context.window;
    for (let offset = 0; ; offset += PROVIDER_PAGE) {
      const query = { date_from: from, date_to: to, count: PROVIDER_PAGE, offset };
      const page = (await context.call(() =>
        this.store.call(tenantId, kind.list, { query } as never),
      )) as { items: Item[] };
      await context.pageDone();
      yield page.items;
      if (page.items.length < PROVIDER_PAGE) return;
    }
  }

  /**
   * The tenant's rows of a page's provider ids, in one statement (as `owned`: null for an id another
   * tenant holds; none for an id no row holds).
   */
  private async held(
    context: RunContext,
    kind: ListKind,
    items: readonly Item[],
  ): Promise<Map<string, CardRow | null>> {
    const held = new Map<string, CardRow | null>();
    if (items.length === 0) return held;
    const rows = await this.rows.findBy({
      kind: kind.kind,
      token: In(items.map((item) => item.token)),
    });
    for (const row of rows)
      held.set(
        row.token!,
        row.tenantId === context.window.tenantId && held.get(row.token!) !== null
          ? (row as CardRow)
          : null,
      );
    return held;
  }

  /**
   * The tenant's row of a provider id; null when another tenant holds it (two tenants on one merchant:
   * not this run's to judge).
   */
  private async owned(
    context: RunContext,
    kind: ListKind,
    token: string,
  ): Promise<CardRow | undefined | null> {
    try {
      return await this.store.owned(context.window.tenantId, kind.kind, token);
    } catch (error) {
      if (error instanceof ProblemException && error.init.status === 404) return null;
      throw error;
    }
  }

  /** Portico's rows of the window (by Portico's creation time) with a provider id the list did not show. */
  private async unseen(context: RunContext, kind: ListKind, seen: Set<string>): Promise<CardRow[]> {
    const { tenantId, from, to } = context.window;
    const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000);
    const rows = await this.rows.find({
      where: {
        tenantId,
        kind: kind.kind,
        token: Not(IsNull()),
        status: Not('failed'),
        createdAt: And(MoreThanOrEqual(new Date(`${from}T00:00:00Z`)), LessThan(end)),
      },
      order: { createdAt: 'ASC' },
    });
    return rows.filter((row) => !seen.has(row.token!)) as CardRow[];
  }

  /** A resource read by id: its answer, or undefined when the provider answers not found. */
  private async read(context: RunContext, kind: ListKind, row: CardRow): Promise<Item | undefined> {
    const path = { [`${kind.kind}Id`]: row.token! };
    const answer = await context.call(() =>
      this.store.callRaw(context.window.tenantId, kind.retrieve, { path } as never, row),
    );
    if (answer.status === 404) return undefined;
    if (answer.status >= 400) throw this.store.client.refusal(kind.retrieve, answer);
    return answer.data as Item;
  }

  private porticoValues(kind: ListKind, row: CardRow): Values {
    const data = (row.data ?? {}) as Record<string, unknown>;
    return valuesOf(kind, row.status, { ...data, amount: row.amount ?? data.amount });
  }

  private async compare(
    context: RunContext,
    kind: ListKind,
    row: CardRow,
    item: Item,
  ): Promise<void> {
    const status = kind.status(item);
    const portico = this.porticoValues(kind, row);
    const provider = valuesOf(kind, status, item);
    const flag = (driftClass: 'amount-differs' | 'portico-ahead') =>
      context.flag({
        kind: kind.kind,
        driftClass,
        resourceId: row.id,
        token: item.token,
        portico: portico as JsonObject,
        provider: provider as JsonObject,
      });
    const moved = async (change: 'settle' | 'changed') => {
      if (change === 'settle') await this.store.settle(row, item as never, status, 'reconciled');
      else await this.store.changed(row, item as never, 'reconciled');
      context.count('moved');
    };
    if (IN_DOUBT.has(row.status)) return moved('settle');
    if (kind.fixed.some((name) => differs(portico[name], provider[name])))
      return flag('amount-differs');
    if (same(row.status, status)) {
      // Grown further at the provider in the same status (refunded, reversed): Portico is behind.
      for (const name of kind.grows ?? []) {
        const [mine, theirs] = [portico[name], provider[name]];
        if (typeof mine !== 'number' || typeof theirs !== 'number') continue;
        if (theirs < mine) return flag('portico-ahead');
        if (theirs > mine) return moved('changed');
      }
      if ((kind.follows ?? []).some((name) => differs(portico[name], provider[name])))
        return flag('amount-differs');
      return context.count('matched');
    }
    if (kind.moves[row.status.toLowerCase()]?.includes(status.toLowerCase()))
      return moved('settle');
    return flag('portico-ahead');
  }

  /**
   * A resource made outside Portico (or never recorded) becomes a row of origin `provider`, history
   * cause `found-at-provider`. One a Portico row in doubt may stand for is that row's (the resolver
   * settles it): not adopted. The provider id's unique index makes a second adoption (another replica,
   * a run started again) fail: that row is then compared.
   */
  private async adopt(context: RunContext, kind: ListKind, item: Item): Promise<void> {
    if (await this.heldInDoubt(context, kind, item)) return context.count('in-doubt');
    const parentToken = kind.parent ? item[kind.parent] : undefined;
    let row: CardRow;
    try {
      row = await this.store.begin(context.window.tenantId, kind.kind, {
        token: item.token,
        merchantRef: typeof item.merchant_ref === 'string' ? item.merchant_ref : null,
        ...(typeof parentToken === 'string' ? { parentToken } : {}),
        ...(typeof item.amount === 'number' ? { amount: item.amount } : {}),
        origin: 'provider',
      });
    } catch (error) {
      // CardStore.begin answers a unique index's refusal as 409.
      if (!(error instanceof ProblemException && error.init.status === 409)) throw error;
      const held = await this.owned(context, kind, item.token);
      return held ? this.compare(context, kind, held, item) : undefined;
    }
    await this.store.settle(row, item as never, kind.status(item), 'found-at-provider');
    context.count('adopted');
  }

  private async heldInDoubt(context: RunContext, kind: ListKind, item: Item): Promise<boolean> {
    const { tenantId } = context.window;
    if (kind.inDoubt === 'merchant-ref')
      return (
        typeof item.merchant_ref === 'string' &&
        (await this.store.liveByMerchantRef(tenantId, item.merchant_ref)) !== undefined
      );
    const parentToken = kind.parent ? item[kind.parent] : undefined;
    const inDoubt = await this.rows.countBy({
      tenantId,
      kind: kind.kind,
      token: IsNull(),
      status: Not('failed'),
      ...(kind.inDoubt === 'parent' && typeof parentToken === 'string' ? { parentToken } : {}),
    });
    return inDoubt > 0;
  }
}
