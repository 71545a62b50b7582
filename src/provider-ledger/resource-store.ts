import { oweRead } from '#src/platform/provider-sync/provider-sync-lease.js';
import { randomUUID } from 'node:crypto';
import { In, QueryFailedError, type Repository } from 'typeorm';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import type { BoundResourceState } from '../platform/idempotency/bound-resources.js';
import { isUuid } from '../shared/uuid.js';
import type { UpstreamAnswer } from '../upstreams/http/upstream-caller.js';
import type { LedgerTable } from './ledger-table.js';
import {
  notKnownYet,
  type CreateSteps,
  type WriteSteps,
  type InDoubtKind,
  type ProviderLedger,
} from './provider-ledger.service.js';
import {
  PROVIDER_RESOURCE_SUBJECTS,
  ProviderResource,
  type ProviderData,
  type ProviderResourceKind,
} from './provider-resource.entity.js';

/** A capability's kinds of provider_resources rows, each with the type of what its `data` holds. */
export type KindMap = { [K in ProviderResourceKind]?: ProviderData };

/** The kinds of a capability's map. */
export type KindOf<M extends KindMap> = keyof M & ProviderResourceKind;

/** What a row of kind K of map M holds in `data`. */
export type DataOf<M extends KindMap, K extends KindOf<M>> = NonNullable<M[K]>;

/** A row of kind K, its `data` typed as its capability declared it. */
export type Resource<M extends KindMap, K extends KindOf<M> = KindOf<M>> = Omit<
  ProviderResource,
  'kind' | 'data'
> & { kind: K; data: DataOf<M, K> | null };

/** Fields a new row may start with. */
export type BeginFields<M extends KindMap, K extends KindOf<M>> = Partial<
  Pick<ProviderResource, 'id' | 'token' | 'merchantRef' | 'parentToken' | 'amount' | 'origin'>
> & { data?: DataOf<M, K> | null; status?: string };

/** The call that creates a row, written ahead with it: its operation, and its deadline when its own. */
export interface WriteAhead {
  operation: string;
  deadlineMs?: number;
  /**
   * The row's facade path, given its id: the request's Idempotency-Key is bound to it by the begin's
   * statement, and the create sequence (`create`) names it (a write in doubt tells the app to follow it).
   */
  resource?: (id: string) => string;
}

const UNIQUE_VIOLATION = '23505';

/**
 * Whether a write failed on a unique index (a merchant_ref, a POS transaction_id already held), through
 * TypeORM or on the hot path (pg's own error).
 */
export const isUniqueViolation = (error: unknown) =>
  (error instanceof QueryFailedError
    ? (error.driverError as { code?: string })
    : (error as { code?: unknown } | null)
  )?.code === UNIQUE_VIOLATION;

export const notFound = (what: string, id: string) =>
  new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail: `No ${what} ${id}`,
  });

/**
 * A capability's rows in the ledger's shared table (provider_resources), typed by its kinds: the
 * queries every capability needs (the tenant's row of a provider id, by Portico's id, by parent, the
 * unclaimed provider resource of a row in doubt, the state an Idempotency-Key's repeat answers), and the
 * ledger's mechanisms on these rows. A capability extends it with its kinds and its upstream's call.
 */
export class ResourceStore<M extends KindMap> {
  readonly table: LedgerTable<ProviderResource>;

  constructor(
    protected readonly ledger: ProviderLedger,
    protected readonly rows: Repository<ProviderResource>,
  ) {
    this.table = {
      entity: ProviderResource,
      name: 'provider_resources',
      subjectKind: (row) => PROVIDER_RESOURCE_SUBJECTS[row.kind],
      accessSubject: (row) => ({ cardResourceId: row.id }),
    };
  }

  /**
   * Stores a resource about to be created at the provider (`creating`), with its first history entry,
   * and the call that creates it written ahead when given (one statement: ProviderLedger.begin).
   */
  async begin<K extends KindOf<M>>(
    tenantId: string,
    kind: K,
    fields: BeginFields<M, K> = {},
    writeAhead?: WriteAhead,
  ): Promise<Resource<M, K>> {
    const row = this.rows.create({
      id: fields.id ?? randomUUID(),
      tenantId,
      kind,
      token: fields.token ?? null,
      parentToken: fields.parentToken ?? null,
      merchantRef: fields.merchantRef ?? null,
      amount: fields.amount ?? null,
      data: fields.data ?? null,
      status: fields.status ?? 'creating',
      ...(fields.origin ? { origin: fields.origin } : {}),
    });
    const { resource: resourceOf, ...call } = writeAhead ?? { operation: '' };
    const subject = writeAhead && { tenantId, psuPresent: false, ...call };
    const resource = resourceOf?.(row.id);
    const begun = this.typed<K>(await this.ledger.begin(this.table, row, subject, resource));
    if (resource) this.resources.set(begun, resource);
    return begun;
  }

  /** The facade path of each row begun with one (WriteAhead.resource), for its create sequence. */
  private readonly resources = new WeakMap<object, string>();

  /**
   * The tenant's row of a provider id: another tenant's is 404 (as if it did not exist), none at all
   * is undefined (the provider, called with this tenant's keys, says whether it is the tenant's).
   */
  async owned<K extends KindOf<M>>(
    tenantId: string,
    kind: K,
    token: string,
  ): Promise<Resource<M, K> | undefined> {
    const rows = await this.rows.findBy({ token, kind });
    if (rows.some((row) => row.tenantId !== tenantId)) throw notFound(kind, token);
    return rows[0] && this.typed<K>(rows[0]);
  }

  /**
   * Marks a row owed a read from the provider `afterMs` from now (a part of the provider sync with
   * `whenOwed` reads it): for a change the provider makes to it through another resource (a refund).
   */
  oweRead(row: Resource<M>, afterMs: number): Promise<void> {
    return oweRead(this.rows.manager, 'provider_resources', row.id, afterMs);
  }

  /** A row by Portico's id, whoever's it is (the background jobs). */
  async row<K extends KindOf<M>>(kind: K, id: string): Promise<Resource<M, K> | undefined> {
    const row = await this.rows.findOneBy({ id, kind });
    return row ? this.typed<K>(row) : undefined;
  }

  /** A row of the tenant by Portico's id (a write in doubt has no provider id yet); 404 when none. */
  async byId<K extends KindOf<M>>(tenantId: string, kind: K, id: string): Promise<Resource<M, K>> {
    const row = await this.rows.findOneBy({ id, tenantId, kind });
    if (!row) throw notFound(kind, id);
    return this.typed<K>(row);
  }

  /** A row by its parent (an IRIS session by its reference's digest, an IRIS payment by its source). */
  async byParent<K extends KindOf<M>>(
    kind: K,
    parentToken: string,
  ): Promise<Resource<M, K> | undefined> {
    const row = await this.rows.findOneBy({ kind, parentToken });
    return row ? this.typed<K>(row) : undefined;
  }

  /** Every row of a kind of the tenant, oldest first (a small set: device-wallet domains). */
  async ofKind<K extends KindOf<M>>(tenantId: string, kind: K): Promise<Resource<M, K>[]> {
    const rows = await this.rows.find({ where: { tenantId, kind }, order: { createdAt: 'ASC' } });
    return rows.map((row) => this.typed<K>(row));
  }

  /**
   * A row an Idempotency-Key is bound to, as it stands (by Portico's id, or the provider's for a capture):
   * in doubt until settled; failed as GET answers it; settled as `view` shows it (or as the problem
   * `view` gives for a resource the provider recorded as failed).
   */
  async boundState<K extends KindOf<M>>(
    tenantId: string,
    kind: K,
    id: string,
    view: (row: Resource<M, K>) => unknown,
  ): Promise<BoundResourceState | undefined> {
    const found = await this.rows.findOneBy(
      isUuid(id) ? { id, tenantId, kind } : { token: id, tenantId, kind },
    );
    if (!found) return undefined;
    const row = this.typed<K>(found);
    if (row.status === 'creating' || row.status === 'unknown') return { state: 'in-doubt' };
    if (row.status === 'failed' || !row.data)
      return { state: 'failed', problem: notKnownYet(kind, row) };
    const shown = view(row);
    if (shown instanceof ProblemException) return { state: 'failed', problem: shown };
    return { state: 'settled', body: shown };
  }

  /** A resource Portico wrote whose outcome at the provider is not known yet (or that failed there). */
  notKnownYet(what: string, row: Resource<M>): ProblemException {
    return notKnownYet(what, row);
  }

  /**
   * The provider's resource a row in doubt stands for: among `items` (newest first, under the row's
   * parent), the first of the row's amount (any, when it has none) that no Portico row of its kind holds.
   */
  async unclaimed<T extends { token: string; amount: number }>(
    row: Resource<M>,
    items: readonly T[],
  ): Promise<T | undefined> {
    const { tenantId, kind, parentToken } = row;
    const rows = await this.rows.findBy({
      tenantId,
      kind,
      ...(parentToken ? { parentToken } : {}),
    });
    const held = new Set(rows.map((other) => other.token));
    return items.find(
      (item) => !held.has(item.token) && (row.amount === null || item.amount === row.amount),
    );
  }

  /**
   * Whether another row of the tenant's kind with the same parent token (a lost creation's fingerprint)
   * is still in its call (`creating`, younger than `callMs`): its answer may name the very object a
   * lookup for `row` would find, so the lookup waits for it.
   */
  async twinInFlight(row: Resource<M>, callMs: number): Promise<boolean> {
    if (!row.parentToken) return false;
    const twins = (await this.rows.query(
      `SELECT 1 FROM provider_resources
        WHERE tenant_id = $1 AND kind = $2 AND parent_token = $3 AND id <> $4 AND status = 'creating'
          AND created_at > now() - make_interval(secs => $5::double precision / 1000)
        LIMIT 1`,
      [row.tenantId, row.kind, row.parentToken, row.id, callMs],
    )) as unknown[];
    return twins.length > 0;
  }

  /** Which of these provider ids a row of the tenant already holds (a lookup's candidates). */
  async heldTokens(tenantId: string, tokens: readonly string[]): Promise<Set<string | null>> {
    if (tokens.length === 0) return new Set();
    const rows = await this.rows.findBy({ tenantId, token: In([...tokens]) });
    return new Set(rows.map((row) => row.token));
  }

  /** Takes the provider's answer about a resource: its id, its data, its status (with history). */
  async settle<K extends KindOf<M>>(
    row: Resource<M, K>,
    data: DataOf<M, K>,
    status: string,
    cause: string,
  ): Promise<void> {
    await this.settleOnce(row, data, status, cause);
  }

  /** The same, answering whether this call moved the row (false: another moved it first). */
  settleOnce<K extends KindOf<M>>(
    row: Resource<M, K>,
    data: DataOf<M, K>,
    status: string,
    cause: string,
  ): Promise<boolean> {
    const token = typeof data.token === 'string' ? data.token : row.token;
    const amount = typeof data.amount === 'number' ? data.amount : row.amount;
    Object.assign(row, { token, data, amount });
    return this.ledger.transition(this.table, this.untyped(row), status, cause, {
      token,
      data,
      amount,
    });
  }

  /** A provider resource first seen through a read with this tenant's keys: it is the tenant's. */
  async adopt<K extends KindOf<M>>(
    tenantId: string,
    kind: K,
    data: DataOf<M, K>,
    status: string,
    fields: Pick<BeginFields<M, K>, 'merchantRef' | 'parentToken'> = {},
  ): Promise<Resource<M, K>> {
    const row = await this.begin(tenantId, kind, fields);
    await this.settle(row, data, status, 'seen-at-provider');
    return row;
  }

  /** Moves the row to `to` with history and event, compare-and-set (false: another got there first). */
  transition(row: Resource<M>, to: string, cause: string): Promise<boolean> {
    return this.ledger.transition(this.table, this.untyped(row), to, cause);
  }

  /** A change that keeps the status (an update): recorded in the history all the same. */
  async changed<K extends KindOf<M>>(
    row: Resource<M, K>,
    data: DataOf<M, K>,
    cause: string,
  ): Promise<void> {
    row.data = data;
    await this.ledger.changed(this.table, this.untyped(row), cause, { data });
  }

  /** A change at the provider that leaves the row's data as it is (a card added): touched, with history. */
  async note(row: Resource<M>, cause: string): Promise<void> {
    const untyped = this.untyped(row);
    untyped.data ??= {};
    await this.ledger.changed(this.table, untyped, cause, { data: untyped.data });
  }

  /** A row's call written ahead with it and never sent (its sequence stopped before): completed so. */
  notSent(row: Resource<M>): Promise<void> {
    return this.ledger.notSent(this.untyped(row));
  }

  /**
   * The create sequence (ProviderLedger.create) for a row just begun; `steps.resource` defaults to the
   * path the row was begun with (WriteAhead.resource).
   */
  create<K extends KindOf<M>, T>(
    row: Resource<M, K>,
    steps: Omit<CreateSteps<Resource<M, K>, T>, 'resource'> & { resource?: string },
  ): Promise<T> {
    const resource = steps.resource ?? this.resources.get(row);
    if (resource === undefined)
      throw new Error(
        `A create of ${row.kind} needs its resource: begin it with WriteAhead.resource`,
      );
    return this.ledger.create(this.table, row, { ...steps, resource });
  }

  /** A write on a row that exists at the provider (ProviderLedger.write). */
  write<K extends KindOf<M>, T>(
    row: Resource<M, K>,
    steps: WriteSteps<Resource<M, K>, T>,
  ): Promise<T> {
    return this.ledger.write(this.table, row, steps);
  }

  /** A kind's rows in doubt for the resolver (ProviderLedger.onInDoubt), `settle` settling one. */
  inDoubt<K extends KindOf<M>>(
    kind: K,
    settle: (row: Resource<M, K>) => Promise<unknown>,
  ): InDoubtKind<ProviderResource> {
    return { table: this.table, kind, settle: (row) => settle(this.typed<K>(row)) };
  }

  /** A provider call about a row (or none), written ahead in the access log (ProviderLedger.call). */
  protected callAbout<T>(
    tenantId: string,
    operation: string,
    row: Resource<M> | undefined,
    send: () => Promise<UpstreamAnswer<T>>,
    deadlineMs?: number,
  ): Promise<UpstreamAnswer<T>> {
    return this.ledger.call(
      {
        tenantId,
        operation,
        psuPresent: false,
        cardResourceId: row?.id,
        ...(deadlineMs === undefined ? {} : { deadlineMs }),
      },
      send,
      row && this.untyped(row),
    );
  }

  /** The one place a stored row takes its kind's type: the kind column says which. */
  protected typed<K extends KindOf<M>>(row: ProviderResource): Resource<M, K> {
    return row as Resource<M, K>;
  }

  private untyped(row: Resource<M>): ProviderResource {
    return row;
  }
}
