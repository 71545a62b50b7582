import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import { ProviderResource } from '#src/provider-ledger/provider-resource.entity.js';
import {
  isUniqueViolation,
  ResourceStore,
  type Resource,
} from '#src/provider-ledger/resource-store.js';
import type { UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import {
  PosClient,
  type PosAnswer,
  type PosOperation,
  type PosRequest,
  type PosTransactionRequest,
  type PosTransactionResult,
} from '#src/upstreams/pos/pos.client.js';

/** The provider's refusal of a transaction as Portico keeps it (and names it in problem+json). */
export interface PosRefusal {
  status: number;
  code: string;
  title: string | null;
  /** The fields the provider named. */
  fields?: string[];
}

/** What Portico keeps of a POS transaction besides its status: what was asked, and what came of it. */
export type PosRowData = {
  /** The upstream request (snake_case), to tell a repeat from another request under the same id. */
  request: PosTransactionRequest;
  /** The provider's last answer about it (the masked card only). */
  result: PosTransactionResult | null;
  /** The provider's refusal, when it refused it. */
  refusal: PosRefusal | null;
  /** A payment's void, once Portico saw it captured (the payment is then `VOIDED`). */
  voidedBy?: string;
};

/** POS kinds of the ledger's rows: `token` is the transaction_id, `parent_token` a void's original. */
export type PosKinds = { pos_payment: PosRowData; pos_void: PosRowData };
export type PosKind = keyof PosKinds;
export type PosRow = Resource<PosKinds>;
const POS_KINDS: PosKind[] = ['pos_payment', 'pos_void'];

/**
 * POS transactions in the provider-resource ledger (kinds pos_payment and pos_void): the row is written
 * before the provider is called, its status history and webhooks follow each change, and every provider
 * call is written ahead in the access log with the operation's own deadline.
 */
/** The call that starts a transaction. */
const CREATE = 'createPosTransaction';

@Injectable()
export class PosStore extends ResourceStore<PosKinds> {
  constructor(
    ledger: ProviderLedger,
    @InjectRepository(ProviderResource) rows: Repository<ProviderResource>,
    readonly client: PosClient,
  ) {
    super(ledger, rows);
  }

  /**
   * Stores a transaction about to be sent (`creating`), its call written ahead with it and the request's
   * Idempotency-Key bound to `resource` (its facade path); undefined when the tenant already has its id.
   */
  async start(
    tenantId: string,
    request: PosTransactionRequest,
    resource: string,
  ): Promise<PosRow | undefined> {
    try {
      return await this.begin(
        tenantId,
        request.type === 'void' ? 'pos_void' : 'pos_payment',
        {
          token: request.transaction_id,
          parentToken: request.type === 'void' ? request.original_transaction_id : null,
          amount: request.amount ?? null,
          data: { request, result: null, refusal: null },
        },
        {
          operation: CREATE,
          deadlineMs: this.client.caller.deadlineMsOf(CREATE),
          resource: () => resource,
        },
      );
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  /** The tenant's row of a transaction_id (payment or void), if any. */
  async byTransactionId(tenantId: string, transactionId: string): Promise<PosRow | undefined> {
    const row = await this.rows.findOneBy({ tenantId, token: transactionId, kind: In(POS_KINDS) });
    return row ? this.typed(row) : undefined;
  }

  /** A transaction by Portico's id, whoever's it is (the background jobs). */
  async byRowId(id: string): Promise<PosRow | undefined> {
    const row = await this.rows.findOneBy({ id, kind: In(POS_KINDS) });
    return row ? this.typed(row) : undefined;
  }

  /** The row as stored now (another request or replica may have settled it). */
  async reload(row: PosRow): Promise<PosRow> {
    return this.typed(await this.rows.findOneByOrFail({ id: row.id }));
  }

  /**
   * Takes the provider's answer: the result and its status (with history and webhook). A captured void
   * makes its original `VOIDED`; so does a payment settled after a void of it was (its answer was late).
   * Whether this call settled it (false: another request or replica did first).
   */
  async settleResult(row: PosRow, result: PosTransactionResult, cause: string): Promise<boolean> {
    const settled = await this.settleOnce(row, { ...dataOf(row), result }, result.status, cause);
    if (result.status === 'CAPTURED') await this.voidedIfSo(row);
    return settled;
  }

  /**
   * A captured void's payment, or a captured payment with a captured void, made `VOIDED` if it is not yet:
   * after a settlement, and on every read of a captured transaction, so that a fault between a void's
   * settlement and its payment's (two writes) is mended by the next read of either.
   */
  async voidedIfSo(row: PosRow): Promise<void> {
    if (row.status !== 'CAPTURED') return;
    if (row.kind === 'pos_void' && row.parentToken) {
      const original = await this.byTransactionId(row.tenantId, row.parentToken);
      if (original) await this.voided(original, row.token!);
    } else if (row.kind === 'pos_payment') {
      const voiding = await this.rows.findOneBy({
        tenantId: row.tenantId,
        kind: 'pos_void',
        parentToken: row.token!,
        status: 'CAPTURED',
      });
      if (voiding) await this.voided(row, voiding.token!);
    }
  }

  /** A captured payment whose void was captured: `VOIDED`, naming its void (history and webhook). */
  private async voided(payment: PosRow, voidTransactionId: string): Promise<void> {
    if (payment.kind !== 'pos_payment' || payment.status !== 'CAPTURED') return;
    await this.settle(
      payment,
      { ...dataOf(payment), voidedBy: voidTransactionId },
      'VOIDED',
      'voided',
    );
  }

  /**
   * A page of the tenant's transactions as Portico holds them, newest first: those the provider took
   * (not the ones it refused or that were never made), filtered by terminal, status, type and start time.
   */
  async page(tenantId: string, filter: PosTransactionFilter): Promise<[PosRow[], number]> {
    const query = this.rows
      .createQueryBuilder('r')
      .where('r.tenant_id = :tenantId AND r.kind IN (:...kinds)', { tenantId, kinds: POS_KINDS })
      .andWhere("r.status <> 'failed'");
    if (filter.terminal)
      query.andWhere("r.data -> 'request' ->> 'terminal' = :terminal", {
        terminal: filter.terminal,
      });
    if (filter.type)
      query.andWhere('r.kind = :kind', {
        kind: filter.type === 'void' ? 'pos_void' : 'pos_payment',
      });
    if (filter.statuses)
      query.andWhere('r.status IN (:...statuses)', { statuses: filter.statuses });
    if (filter.from) query.andWhere('r.created_at >= :from', { from: filter.from });
    if (filter.before) query.andWhere('r.created_at < :before', { before: filter.before });
    const [rows, total] = await query
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .skip((filter.page - 1) * filter.pageSize)
      .take(filter.pageSize)
      .getManyAndCount();
    return [rows.map((row) => this.typed(row)), total];
  }

  /** The provider refused it: kept with the refusal, status `failed`. */
  async refuse(row: PosRow, refusal: PosRefusal): Promise<void> {
    await this.settle(
      row,
      { ...dataOf(row), refusal },
      'failed',
      `upstream-refused:${refusal.code}`,
    );
  }

  /** Both POS kinds' rows in doubt for the resolver, `settle` settling one. */
  inDoubtKinds(settle: (row: PosRow) => Promise<unknown>) {
    return POS_KINDS.map((kind) => this.inDoubt(kind, settle));
  }

  /**
   * Calls the provider for a tenant through the ledger (written ahead in the access log, about `row`
   * when given, with the operation's deadline); answers refusals (4xx) for the caller to read,
   * rethrows failures of the seam.
   */
  call<O extends PosOperation>(
    tenantId: string,
    operation: O,
    request: PosRequest<O>,
    row?: PosRow,
  ): Promise<UpstreamAnswer<PosAnswer<O>>> {
    return this.callAbout(
      tenantId,
      operation,
      row,
      () => this.client.call(operation, tenantId, request),
      this.client.caller.deadlineMsOf(operation),
    );
  }
}

/** What a page of the tenant's transactions is filtered by (`statuses`: the rows' statuses). */
export interface PosTransactionFilter {
  terminal?: string;
  type?: 'payment' | 'void';
  statuses?: string[];
  from?: Date;
  before?: Date;
  page: number;
  pageSize: number;
}

/** A POS row's data: written with the row (PosStore.start), so never null. */
export function dataOf(row: PosRow): PosRowData {
  if (!row.data) throw new Error(`POS row ${row.id} has no data`);
  return row.data;
}

/**
 * The stored result as the facade answers it: a voided payment `VOIDED` with its void (`voided_by`);
 * undefined while the provider has not decided it.
 */
export function resultOf(row: PosRow): PosTransactionResult | undefined {
  const { result, voidedBy } = dataOf(row);
  if (!result) return undefined;
  return row.status === 'VOIDED' && voidedBy
    ? { ...result, status: 'VOIDED', voided_by: voidedBy }
    : result;
}
