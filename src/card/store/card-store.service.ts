import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { QueryFailedError, type Repository } from 'typeorm';
import { AccessLogService } from '../../audit/trail/access-log.service.js';
import { StatusHistoryService } from '../../audit/trail/status-history.service.js';
import type { JsonObject } from '../../platform/common/json.js';
import { PROBLEM_TYPES, ProblemException } from '../../platform/errors/problem.js';
import type { BoundResourceState } from '../../platform/idempotency/bound-resources.js';
import { isUuid } from '../../shared/uuid.js';
import { leaseInDoubt } from '../../platform/in-doubt/in-doubt-lease.js';
import { failureOutcome, type UpstreamAnswer } from '../../upstreams/http/upstream-caller.js';
import {
  CardClient,
  type CardAnswer,
  type CardOperation,
  type CardRequest,
} from '../../upstreams/card/card.client.js';
import {
  CARD_SUBJECT_KINDS as SUBJECT_KIND,
  CardResource,
  type CardResourceKind,
} from './card-resource.entity.js';

const UNIQUE_VIOLATION = '23505';

export const notFound = (what: string, id: string) =>
  new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail: `No ${what} ${id}`,
  });

/**
 * Portico's record of what tenants do on the card API: a row per payment, refund and customer (whose
 * it is, the provider's id, its status with history in status_changes), and an access-log row per
 * provider call written before the call and completed after it. Every card capability calls the
 * provider through `call` here, so that nothing reaches the provider unrecorded.
 */
@Injectable()
export class CardStore {
  constructor(
    @InjectRepository(CardResource) private readonly rows: Repository<CardResource>,
    private readonly history: StatusHistoryService,
    private readonly accessLog: AccessLogService,
    readonly client: CardClient,
  ) {}

  /** Stores a resource about to be created at the provider (`creating`), with its first history entry. */
  async begin(
    tenantId: string,
    kind: CardResourceKind,
    fields: Partial<
      Pick<CardResource, 'id' | 'merchantRef' | 'parentToken' | 'amount' | 'data'>
    > = {},
  ): Promise<CardResource> {
    const row = this.rows.create({
      id: fields.id ?? randomUUID(),
      tenantId,
      kind,
      token: null,
      parentToken: fields.parentToken ?? null,
      merchantRef: fields.merchantRef ?? null,
      amount: fields.amount ?? null,
      data: fields.data ?? null,
      status: 'creating',
    });
    try {
      await this.rows.manager.transaction(async (manager) => {
        await manager.insert(CardResource, row as never);
        await this.history.append(this.subject(row), null, 'creating', 'created', manager);
      });
    } catch (error) {
      if (
        error instanceof QueryFailedError &&
        (error.driverError as { code?: string }).code === UNIQUE_VIOLATION
      )
        throw new ProblemException({
          status: 409,
          type: PROBLEM_TYPES.conflict,
          title: 'Conflict',
          detail: `A payment with merchantRef "${fields.merchantRef}" exists (merchant references are unique)`,
          extensions: { code: '40025' },
        });
      throw error;
    }
    return row;
  }

  /**
   * The tenant's row of a provider id: another tenant's is 404 (as if it did not exist), none at all
   * is undefined (the provider, called with this tenant's keys, says whether it is the tenant's).
   */
  async owned(
    tenantId: string,
    kind: CardResourceKind,
    token: string,
  ): Promise<CardResource | undefined> {
    const rows = await this.rows.findBy({ token, kind });
    if (rows.some((row) => row.tenantId !== tenantId)) throw notFound(kind, token);
    return rows[0];
  }

  /** A row by Portico's id, whoever's it is (the background jobs). */
  async row(id: string): Promise<CardResource | undefined> {
    return (await this.rows.findOneBy({ id })) ?? undefined;
  }

  /** A row by its parent (an IRIS session by its reference's digest, an IRIS payment by its source). */
  byParent(kind: CardResourceKind, parentToken: string): Promise<CardResource | null> {
    return this.rows.findOneBy({ kind, parentToken });
  }

  /** Every row of a kind of the tenant, oldest first (a small set: device-wallet domains). */
  ofKind(tenantId: string, kind: CardResourceKind): Promise<CardResource[]> {
    return this.rows.find({ where: { tenantId, kind }, order: { createdAt: 'ASC' } });
  }

  /** The tenant's payment row holding a merchant_ref that is not failed (at most one: unique index). */
  liveByMerchantRef(tenantId: string, merchantRef: string): Promise<CardResource | null> {
    return this.rows
      .createQueryBuilder('r')
      .where("r.tenant_id = :tenantId AND r.kind = 'payment' AND r.merchant_ref = :merchantRef", {
        tenantId,
        merchantRef,
      })
      .andWhere("r.status <> 'failed'")
      .getOne();
  }

  /** A row of the tenant by Portico's id (a write in doubt has no provider id yet). */
  async byId(tenantId: string, kind: CardResourceKind, id: string): Promise<CardResource> {
    const row = await this.rows.findOneBy({ id, tenantId, kind });
    if (!row) throw notFound(kind, id);
    return row;
  }

  /** A resource Portico wrote whose outcome at the provider is not known yet (or that failed there). */
  notKnownYet(what: string, row: CardResource): ProblemException {
    const failed = row.status === 'failed';
    return new ProblemException({
      status: 409,
      type: 'urn:portico:problem:outcome-unknown',
      title: 'Outcome unknown',
      detail: failed
        ? `The provider did not make ${what} ${row.id}`
        : `The outcome of ${what} ${row.id} is not known yet; Portico settles it with the provider`,
      headers: failed ? {} : { 'Retry-After': '5' },
      // Not `status`: that is the problem's own HTTP status.
      extensions: { id: row.id, resourceStatus: row.status },
    });
  }

  /**
   * A row an Idempotency-Key is bound to, as it stands (by Portico's id, or the provider's for a capture):
   * in doubt until settled; failed as GET answers it; settled as `view` shows it (or as the problem
   * `view` gives for a resource the provider recorded as failed).
   */
  async boundState(
    tenantId: string,
    kind: CardResourceKind,
    id: string,
    view: (row: CardResource) => unknown,
  ): Promise<BoundResourceState | undefined> {
    const row = await this.rows.findOneBy(
      isUuid(id) ? { id, tenantId, kind } : { token: id, tenantId, kind },
    );
    if (!row) return undefined;
    if (row.status === 'creating' || row.status === 'unknown') return { state: 'in-doubt' };
    if (row.status === 'failed' || !row.data)
      return { state: 'failed', problem: this.notKnownYet(kind, row) };
    const shown = view(row);
    if (shown instanceof ProblemException) return { state: 'failed', problem: shown };
    return { state: 'settled', body: shown };
  }

  manager() {
    return this.rows.manager;
  }

  /**
   * Works the rows of one kind left in doubt, each under a lease (of N replicas one works a row), with
   * `settle`; a row it cannot settle yet stays in doubt for the next round. Answers how many it took.
   */
  async settleInDoubt(
    kind: CardResourceKind,
    olderThanMs: number,
    settle: (row: CardResource) => Promise<unknown>,
  ): Promise<number> {
    let worked = 0;
    for (;;) {
      const ids = await leaseInDoubt(this.rows.manager, 'card_resources', olderThanMs, 20, kind);
      if (ids.length === 0) return worked;
      worked += ids.length;
      for (const id of ids)
        await settle(await this.rows.findOneByOrFail({ id })).catch(() => undefined);
    }
  }

  /**
   * The provider's resource a row in doubt stands for: among `items` (newest first, under the row's
   * parent), the first of the row's amount (any, when it has none) that no Portico row of its kind holds.
   */
  async unclaimed<T extends { token: string; amount: number }>(
    row: CardResource,
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

  /** Takes the provider's answer about a resource: its id, its data, its status (with history). */
  async settle(row: CardResource, data: JsonObject, status: string, cause: string): Promise<void> {
    const token = typeof data.token === 'string' ? data.token : row.token;
    const amount = typeof data.amount === 'number' ? data.amount : row.amount;
    await this.rows.update({ id: row.id }, { token, data: data as never, amount });
    Object.assign(row, { token, data, amount });
    await this.transition(row, status, cause);
  }

  /** A provider resource first seen through a read with this tenant's keys: it is the tenant's. */
  async adopt(
    tenantId: string,
    kind: CardResourceKind,
    data: JsonObject,
    status: string,
  ): Promise<CardResource> {
    const row = await this.begin(tenantId, kind, {
      merchantRef: kind === 'payment' ? ((data.merchant_ref as string | null) ?? null) : null,
      parentToken: kind === 'refund' ? ((data.payment as string | null) ?? null) : null,
    });
    await this.settle(row, data, status, 'seen-at-provider');
    return row;
  }

  transition(row: CardResource, to: string, cause: string): Promise<boolean> {
    return this.history.transition(CardResource, SUBJECT_KIND[row.kind], row, to, cause);
  }

  /** A change that keeps the status (an update): recorded in the history all the same. */
  async changed(row: CardResource, data: JsonObject, cause: string): Promise<void> {
    await this.rows.update({ id: row.id }, { data: data as never });
    row.data = data;
    await this.history.append(this.subject(row), row.status, row.status, cause);
  }

  historyOf(row: CardResource) {
    return this.history.of(SUBJECT_KIND[row.kind], row.id);
  }

  /**
   * Calls the provider for a tenant, written ahead in the access log (about `row` when given) and
   * completed after; a refusal (4xx) becomes problem+json with the provider's status and code.
   * Failures of the seam (502/503/504) are rethrown for the caller to judge (in doubt or not).
   */
  async call<O extends CardOperation>(
    tenantId: string,
    operation: O,
    request: CardRequest,
    row?: CardResource,
    options: { publicKey?: boolean; keyInBody?: string } = {},
  ): Promise<CardAnswer<O>> {
    const answer = await this.callRaw(tenantId, operation, request, row, options);
    if (answer.status >= 400) throw this.client.refusal(operation, answer);
    return answer.data as CardAnswer<O>;
  }

  /** As `call`, answering a refusal rather than throwing it. */
  async callRaw<O extends CardOperation>(
    tenantId: string,
    operation: O,
    request: CardRequest,
    row?: CardResource,
    options: { publicKey?: boolean; keyInBody?: string } = {},
  ): Promise<UpstreamAnswer<CardAnswer<O>>> {
    const started = performance.now();
    const subject = { tenantId, operation, psuPresent: false, cardResourceId: row?.id };
    const logId = await this.accessLog.begin(subject);
    const latencyMs = () => Math.round(performance.now() - started);
    let answer: UpstreamAnswer<CardAnswer<O>>;
    try {
      answer = await this.client.call(operation, tenantId, request, options);
    } catch (error) {
      await this.accessLog.complete(logId, {
        outcome: failureOutcome(error),
        upstreamStatus:
          (
            (error as ProblemException).init?.extensions?.upstream as
              { status?: number } | undefined
          )?.status ?? null,
        latencyMs: latencyMs(),
      });
      throw error;
    }
    await this.accessLog.complete(logId, {
      outcome: answer.status < 400 ? 'ok' : `upstream:${answer.messages[0]?.code ?? answer.status}`,
      upstreamStatus: answer.status,
      latencyMs: latencyMs(),
    });
    return answer;
  }

  private subject(row: CardResource) {
    return { kind: SUBJECT_KIND[row.kind], id: row.id, tenantId: row.tenantId };
  }
}
