import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { QueryFailedError, type Repository } from 'typeorm';
import { AccessLogService } from '../../audit/trail/access-log.service.js';
import { StatusHistoryService } from '../../audit/trail/status-history.service.js';
import { ProviderResource } from '../../provider-ledger/provider-resource.entity.js';
import type { JsonObject } from '../../platform/common/json.js';
import type { ProblemException } from '../../platform/errors/problem.js';
import { leaseInDoubt } from '../../platform/in-doubt/in-doubt-lease.js';
import { failureOutcome, type UpstreamAnswer } from '../../upstreams/http/upstream-caller.js';
import {
  PosClient,
  type PosAnswer,
  type PosOperation,
  type PosRequest,
} from '../../upstreams/pos/pos.client.js';

export type PosKind = 'pos_payment' | 'pos_void';

const UNIQUE_VIOLATION = '23505';

/** What Portico keeps of a POS transaction besides its status: what was asked, and what came of it. */
export interface PosRowData extends JsonObject {
  /** The upstream request (snake_case), to tell a repeat from another request under the same id. */
  request: JsonObject;
  /** The provider's last answer about it (the masked card only). */
  result: JsonObject | null;
  /** The provider's refusal, when it refused it: status, code, title. */
  refusal: JsonObject | null;
}

/**
 * Portico's record of POS transactions, in the provider-resource ledger's table (`provider_resources`, kinds pos_payment and
 * pos_void; `token` is the transaction_id, `parent_token` a void's original): the row is written before
 * the provider is called, its status history and webhooks follow each change, and every provider call is
 * written ahead in the access log and completed after it.
 */
@Injectable()
export class PosStore {
  constructor(
    @InjectRepository(ProviderResource) private readonly rows: Repository<ProviderResource>,
    private readonly history: StatusHistoryService,
    private readonly accessLog: AccessLogService,
    readonly client: PosClient,
  ) {}

  /** Stores a transaction about to be sent (`creating`); undefined when the tenant already has its id. */
  async begin(
    tenantId: string,
    kind: PosKind,
    transactionId: string,
    request: JsonObject,
  ): Promise<ProviderResource | undefined> {
    const row = this.rows.create({
      id: randomUUID(),
      tenantId,
      kind,
      token: transactionId,
      parentToken: (request.original_transaction_id as string | undefined) ?? null,
      merchantRef: null,
      amount: (request.amount as number | undefined) ?? null,
      data: { request, result: null, refusal: null } satisfies PosRowData,
      status: 'creating',
    });
    try {
      await this.rows.manager.transaction(async (manager) => {
        await manager.insert(ProviderResource, row as never);
        await this.history.append(this.subject(row), null, 'creating', 'created', manager);
      });
    } catch (error) {
      if (
        error instanceof QueryFailedError &&
        (error.driverError as { code?: string }).code === UNIQUE_VIOLATION
      )
        return undefined;
      throw error;
    }
    return row;
  }

  /** The tenant's row of a transaction_id (payment or void), if any. */
  byTransactionId(tenantId: string, transactionId: string): Promise<ProviderResource | null> {
    return this.rows
      .createQueryBuilder('r')
      .where('r.tenant_id = :tenantId AND r.token = :transactionId', { tenantId, transactionId })
      .andWhere("r.kind IN ('pos_payment', 'pos_void')")
      .getOne();
  }

  async byId(id: string): Promise<ProviderResource | undefined> {
    return (await this.rows.findOneBy({ id })) ?? undefined;
  }

  reload(row: ProviderResource): Promise<ProviderResource> {
    return this.rows.findOneByOrFail({ id: row.id });
  }

  /** Takes the provider's answer: the result and its status (with history and webhook). */
  async settle(row: ProviderResource, result: JsonObject, cause: string): Promise<void> {
    const data = { ...(row.data as PosRowData), result };
    await this.rows.update({ id: row.id }, { data: data as never });
    row.data = data;
    await this.transition(row, String(result.status), cause);
  }

  /** The provider refused it: kept with the refusal, status `failed`. */
  async refuse(row: ProviderResource, refusal: JsonObject): Promise<void> {
    const data = { ...(row.data as PosRowData), refusal };
    await this.rows.update({ id: row.id }, { data: data as never });
    row.data = data;
    await this.transition(row, 'failed', `upstream-refused:${String(refusal.code)}`);
  }

  transition(row: ProviderResource, to: string, cause: string): Promise<boolean> {
    return this.history.transition(ProviderResource, row.kind as PosKind, row, to, cause);
  }

  /** Works the POS rows left in doubt, each under a lease (one replica per row). */
  async settleInDoubt(
    olderThanMs: number,
    settle: (row: ProviderResource) => Promise<unknown>,
  ): Promise<number> {
    let worked = 0;
    for (const kind of ['pos_payment', 'pos_void'] as const)
      for (;;) {
        const ids = await leaseInDoubt(
          this.rows.manager,
          'provider_resources',
          olderThanMs,
          20,
          kind,
        );
        if (ids.length === 0) break;
        worked += ids.length;
        for (const id of ids)
          await settle(await this.rows.findOneByOrFail({ id })).catch(() => undefined);
      }
    return worked;
  }

  /**
   * Calls the provider for a tenant, written ahead in the access log (about `row` when given, with the
   * operation's deadline) and completed after; answers refusals (4xx) for the caller to read, rethrows
   * failures of the seam. The log row's own fate never changes what the provider answered.
   */
  async call<O extends PosOperation>(
    tenantId: string,
    operation: O,
    request: PosRequest,
    row?: ProviderResource,
  ): Promise<UpstreamAnswer<PosAnswer<O>>> {
    const started = performance.now();
    const logId = await this.accessLog.begin({
      tenantId,
      operation,
      psuPresent: false,
      cardResourceId: row?.id,
      deadlineMs: this.client.caller.deadlineMsOf(operation),
    });
    const latencyMs = () => Math.round(performance.now() - started);
    let answer: UpstreamAnswer<PosAnswer<O>>;
    try {
      answer = await this.client.call(operation, tenantId, request);
    } catch (error) {
      const upstream = (error as ProblemException).init?.extensions?.upstream as
        { status?: number } | undefined;
      await this.accessLog.complete(logId, {
        outcome: failureOutcome(error),
        upstreamStatus: upstream?.status ?? null,
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

  private subject(row: ProviderResource) {
    return { kind: row.kind as PosKind, id: row.id, tenantId: row.tenantId };
  }
}
