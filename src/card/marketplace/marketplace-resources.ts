import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { JsonObject } from '../../platform/common/json.js';
import type { ProblemException } from '../../platform/errors/problem.js';
import { BoundResources } from '../../platform/idempotency/bound-resources.js';
import { bindIdempotentResource } from '../../platform/idempotency/idempotency-binding.js';
import { facade } from '../common/card-api.js';
import { isUuid } from '../../shared/uuid.js';
import type { CardAnswer, CardOperation, CardRequest } from '../../upstreams/card/card.client.js';
import { inDoubtProblem, outcomeUnknown } from '../../upstreams/http/upstream-caller.js';
import type { CardResource, CardResourceKind } from '../store/card-resource.entity.js';
import { CardStore } from '../store/card-store.service.js';

export type MarketplaceKind = Extract<
  CardResourceKind,
  'seller' | 'transfer' | 'reversal' | 'payout'
>;

/** Where a facade resource of a kind lives (`/v1/marketplace/<path>/<id>`). */
const PATHS: Record<MarketplaceKind, string> = {
  seller: 'sellers',
  transfer: 'transfers',
  reversal: 'reversals',
  payout: 'payouts',
};

/** The facade schema of each kind a create makes (payouts are the provider's). */
const FACADES = { seller: 'Seller', transfer: 'Transfer', reversal: 'Reversal' } as const;

/**
 * The status Portico keeps for a marketplace resource: a seller's and a payout's own; a transfer
 * `reversed`, `paid_out`, `on_hold` or `pending`; a reversal `paid_out` or `pending`.
 */
export function statusOf(kind: MarketplaceKind, data: Record<string, unknown>): string {
  if (kind === 'seller' || kind === 'payout') return String(data.status);
  if (kind === 'transfer' && data.is_reversed === true) return 'reversed';
  if (data.payout) return 'paid_out';
  return data.on_hold === true ? 'on_hold' : 'pending';
}

/**
 * The marketplace's resources in Portico's store: every create written (row, history, access log)
 * before the provider is called and bound to the Idempotency-Key, so that it never runs twice and a
 * lost answer is in doubt, never failed; every resource read is kept up to date in its row (those
 * Portico did not make, like the scheduler's payouts, are adopted), with its status history.
 */
@Injectable()
export class MarketplaceResources implements OnModuleInit {
  constructor(
    readonly store: CardStore,
    private readonly bound: BoundResources,
  ) {}

  /** A repeat of a create whose outcome was unknown answers the row once it is settled. */
  onModuleInit(): void {
    for (const kind of Object.keys(FACADES) as (keyof typeof FACADES)[])
      this.bound.register({
        prefix: `/v1/marketplace/${PATHS[kind]}/`,
        read: (tenantId, id) =>
          this.store.boundState(tenantId, kind, id, (row) => facade(FACADES[kind], row.data)),
      });
  }

  async create<O extends CardOperation>(
    tenantId: string,
    kind: MarketplaceKind,
    operation: O,
    request: CardRequest,
    fields: { parentToken?: string; amount?: number } = {},
  ): Promise<CardAnswer<O>> {
    const row = await this.store.begin(tenantId, kind, fields);
    const resource = `/v1/marketplace/${PATHS[kind]}/${row.id}`;
    await bindIdempotentResource(resource);
    let answer: CardAnswer<O>;
    try {
      answer = await this.store.call(tenantId, operation, request, row);
    } catch (error) {
      if (!outcomeUnknown(error)) {
        await this.store.transition(row, 'failed', 'upstream-refused');
        throw error;
      }
      await this.store.transition(row, 'unknown', 'upstream-outcome-unknown');
      throw inDoubtProblem(error as ProblemException, { [`${kind}Id`]: row.id, resource });
    }
    const data = answer as unknown as JsonObject;
    await this.store.settle(row, data, statusOf(kind, data), 'upstream-created');
    return answer;
  }

  /**
   * A resource by the provider's id (read there, its row brought up to date) or by Portico's id (a
   * create in doubt: its last known answer, 409 until settled).
   */
  async read<O extends CardOperation>(
    tenantId: string,
    kind: MarketplaceKind,
    operation: O,
    id: string,
    request: CardRequest,
  ): Promise<CardAnswer<O>> {
    if (isUuid(id)) {
      const row = await this.store.byId(tenantId, kind, id);
      if (!row.data) throw this.store.notKnownYet(kind, row);
      return row.data as unknown as CardAnswer<O>;
    }
    const row = await this.store.owned(tenantId, kind, id);
    const answer = await this.store.call(tenantId, operation, request, row);
    await this.keep(tenantId, kind, answer as unknown as JsonObject, row);
    return answer;
  }

  /** A change of an existing resource (update): the provider's answer kept, with its history. */
  async change<O extends CardOperation>(
    tenantId: string,
    kind: MarketplaceKind,
    operation: O,
    token: string,
    request: CardRequest,
  ): Promise<CardAnswer<O>> {
    const row = await this.store.owned(tenantId, kind, token);
    const answer = await this.store.call(tenantId, operation, request, row);
    const data = answer as unknown as JsonObject;
    if (row && row.status === statusOf(kind, data)) await this.store.changed(row, data, 'updated');
    else await this.keep(tenantId, kind, data, row, 'updated');
    return answer;
  }

  /** The tenant's row of a provider id another resource names: another tenant's is 404. */
  async owned(tenantId: string, kind: CardResourceKind, token: string): Promise<void> {
    await this.store.owned(tenantId, kind, token);
  }

  /** Keeps every resource of a page the provider listed (payouts: money that left the marketplace). */
  async keepAll(tenantId: string, kind: MarketplaceKind, items: readonly object[]): Promise<void> {
    for (const item of items) {
      const data = item as JsonObject;
      await this.keep(
        tenantId,
        kind,
        data,
        await this.store.owned(tenantId, kind, String(data.token)),
      );
    }
  }

  private async keep(
    tenantId: string,
    kind: MarketplaceKind,
    data: JsonObject,
    row: CardResource | undefined,
    cause = 'upstream-status',
  ): Promise<void> {
    const status = statusOf(kind, data);
    if (!row) await this.store.adopt(tenantId, kind, data, status);
    else if (row.status !== status) await this.store.settle(row, data, status, cause);
  }
}
