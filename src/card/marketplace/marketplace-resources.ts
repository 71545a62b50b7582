import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BoundResources } from '#src/platform/idempotency/bound-resources.js';
import { isUuid } from '#src/shared/uuid.js';
import type { CardOperation } from '#src/upstreams/card/card.client.js';
import { facade } from '../common/card-api.js';
import {
  CardStore,
  type CardKind,
  type CardKinds,
  type CardRow,
} from '../store/card-store.service.js';

export type MarketplaceKind = Extract<CardKind, 'seller' | 'transfer' | 'reversal' | 'payout'>;

/** The provider's call about a marketplace resource of kind K (about its row, when Portico has one). */
type Send<K extends MarketplaceKind> = (row: CardRow<K> | undefined) => Promise<CardKinds[K]>;

/** Where a facade resource of a kind lives (`/v1/marketplace/<path>/<id>`). */
const PATHS: Record<MarketplaceKind, string> = {
  seller: 'sellers',
  transfer: 'transfers',
  reversal: 'reversals',
  payout: 'payouts',
};

/** The facade schema of each kind a create makes (payouts are the provider's). */
const FACADES = { seller: 'Seller', transfer: 'Transfer', reversal: 'Reversal' } as const;

/** The fields of a Seller, Transfer, Reversal or Payout its status follows from. */
type StatusFields = {
  status?: string;
  is_reversed?: boolean;
  payout?: string | null;
  on_hold?: boolean;
};

/**
 * The status Portico keeps for a marketplace resource: a seller's and a payout's own; a transfer
 * `reversed`, `paid_out`, `on_hold` or `pending`; a reversal `paid_out` or `pending`.
 */
export function statusOf(kind: MarketplaceKind, data: StatusFields): string {
  if (kind === 'seller' || kind === 'payout') return String(data.status);
  if (kind === 'transfer' && data.is_reversed === true) return 'reversed';
  if (data.payout) return 'paid_out';
  return data.on_hold === true ? 'on_hold' : 'pending';
}

/**
 * The marketplace's resources in the provider-resource ledger: every create written (row, history,
 * access log) before the provider is called and bound to the Idempotency-Key, so that it never runs
 * twice and a lost answer is in doubt, never failed; every resource read is kept up to date in its row
 * (those Portico did not make, like the scheduler's payouts, are adopted), with its status history.
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

  async create<K extends MarketplaceKind>(
    tenantId: string,
    kind: K,
    operation: CardOperation,
    send: Send<K>,
    fields: { parentToken?: string; amount?: number } = {},
  ): Promise<CardKinds[K]> {
    // `operation`: the call `send` makes, written ahead with the row.
    const row = await this.store.begin(tenantId, kind, fields, {
      operation,
      resource: (id) => `/v1/marketplace/${PATHS[kind]}/${id}`,
    });
    return this.store.create(row, {
      names: () => ({ [`${kind}Id`]: row.id }),
      send: () => send(row),
      settle: (answer) =>
        this.store.settle(row, answer, statusOf(kind, answer), 'upstream-created'),
    });
  }

  /**
   * A resource by the provider's id (read there, its row brought up to date) or by Portico's id (a
   * create in doubt: its last known answer, 409 until settled).
   */
  async read<K extends MarketplaceKind>(
    tenantId: string,
    kind: K,
    id: string,
    send: Send<K>,
  ): Promise<CardKinds[K]> {
    if (isUuid(id)) {
      const row = await this.store.byId(tenantId, kind, id);
      if (!row.data) throw this.store.notKnownYet(kind, row);
      return row.data;
    }
    const row = await this.store.owned(tenantId, kind, id);
    const answer = await send(row);
    await this.keep(tenantId, kind, answer, row);
    return answer;
  }

  /** A change of an existing resource (update): the provider's answer kept, with its history. */
  async change<K extends MarketplaceKind>(
    tenantId: string,
    kind: K,
    token: string,
    send: Send<K>,
  ): Promise<CardKinds[K]> {
    const row = await this.store.owned(tenantId, kind, token);
    const answer = await send(row);
    if (row && row.status === statusOf(kind, answer))
      await this.store.changed(row, answer, 'updated');
    else await this.keep(tenantId, kind, answer, row, 'updated');
    return answer;
  }

  /** The tenant's row of a provider id another resource names: another tenant's is 404. */
  async owned(tenantId: string, kind: CardKind, token: string): Promise<void> {
    await this.store.owned(tenantId, kind, token);
  }

  /** Keeps every resource of a page the provider listed (payouts: money that left the marketplace). */
  async keepAll<K extends MarketplaceKind>(
    tenantId: string,
    kind: K,
    items: readonly (CardKinds[K] & { token: string })[],
  ): Promise<void> {
    for (const item of items)
      await this.keep(tenantId, kind, item, await this.store.owned(tenantId, kind, item.token));
  }

  private async keep<K extends MarketplaceKind>(
    tenantId: string,
    kind: K,
    data: CardKinds[K],
    row: CardRow<K> | undefined,
    cause = 'upstream-status',
  ): Promise<void> {
    const status = statusOf(kind, data);
    if (!row) await this.store.adopt(tenantId, kind, data, status);
    else if (row.status !== status) await this.store.settle(row, data, status, cause);
  }
}
