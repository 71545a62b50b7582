import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { bindIdempotentResource } from '#src/platform/idempotency/idempotency-binding.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { outcomeUnknown, type UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import type { PosTransactionRequest, PosTransactionResult } from '#src/upstreams/pos/pos.client.js';
import {
  dataOf,
  PosStore,
  resultOf,
  type PosRow,
  type PosTransactionFilter,
} from '../store/pos-store.service.js';
import { notMade, refusalOf, refusalProblem } from './pos-refusal.js';

/** What became of a transaction so far: its final result, a refusal, or still in flight (with the latest view). */
type Outcome =
  | { result: PosTransactionResult; settled?: boolean }
  | { problem: ProblemException }
  | { pending: Partial<PosTransactionResult> };

export interface PosReply {
  /** 200: decided; 202: the terminal has not decided yet (poll `location`). */
  status: 200 | 202;
  body: PosTransactionResult;
  location: string;
}

export const POS_TRANSACTIONS = '/v1/pos/transactions/';

const FINAL = new Set(['CAPTURED', 'FAILED', 'CANCELLED']);
const IN_FLIGHT = new Set(['creating', 'unknown']);

/**
 * POS payments and voids, exactly once: the transaction_id (the app's, the provider's own idempotency
 * handle) is stored with the row before the provider is called. The call may last as long as the payer
 * (up to the POS deadline): the app waits at most `wait`, then gets 202 and polls; the call goes on and
 * settles the row. A lost answer is settled by reading the transaction at the provider by its id, at
 * once and then by the resolver, so that it is never lost and never sent twice.
 */
@Injectable()
export class PosTransactionsService {
  /** Calls in flight in this process, by row id. */
  private readonly inFlight = new Map<string, Promise<Outcome>>();

  constructor(
    private readonly store: PosStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Starts a payment or void (upstream body) and waits at most `waitMs` for the terminal. */
  async start(tenantId: string, request: PosTransactionRequest, waitMs: number): Promise<PosReply> {
    // The Idempotency-Key is bound to the transaction by the statement that stores it.
    const row = await this.store.start(
      tenantId,
      request,
      `${POS_TRANSACTIONS}${request.transaction_id}`,
    );
    if (!row) return this.repeat(tenantId, request, waitMs);
    const outcome = this.send(row);
    this.inFlight.set(row.id, outcome);
    void outcome.finally(() => this.inFlight.delete(row.id));
    return this.reply(row, await this.within(outcome, waitMs));
  }

  /** The transaction as it stands (asking the provider while it is in flight). */
  async get(tenantId: string, transactionId: string): Promise<PosReply> {
    const row = await this.store.byTransactionId(tenantId, transactionId);
    if (!row)
      throw new ProblemException({
        status: 404,
        type: PROBLEM_TYPES.notFound,
        title: 'Not Found',
        detail: `No POS transaction ${transactionId}`,
      });
    // In flight here: what the provider shows now (INITIATING, PENDING), or the outcome if it just came.
    const local = this.inFlight.get(row.id);
    const settled = local ? await this.within(local, 0) : undefined;
    return this.reply(row, settled ?? (await this.current(row)));
  }

  /**
   * A page of the tenant's transactions from Portico's own rows (no call to the provider): each as GET
   * answers it once decided, an undecided one as Portico last saw it (INITIATING or PENDING).
   */
  async list(tenantId: string, filter: PosTransactionFilter) {
    const [rows, totalCount] = await this.store.page(tenantId, filter);
    const items = rows.map((row) => {
      const decided = IN_FLIGHT.has(row.status) ? undefined : resultOf(row);
      return decided ?? undecided(dataOf(row).request, dataOf(row).result ?? {});
    });
    return { totalCount, page: filter.page, pageSize: filter.pageSize, items };
  }

  /**
   * Settles a row left in doubt (the resolver; reconciliation, cause `reconciled`): by reading it at
   * the provider. Whether this call settled it.
   */
  async resolve(row: PosRow, cause = 'resolver'): Promise<boolean> {
    if (this.inFlight.has(row.id)) return false;
    const outcome = await this.lookup(row, cause);
    return 'result' in outcome && outcome.settled === true;
  }

  /** A transaction in doubt read by the provider sync, as a GET reads it (unless its call is under way here). */
  async refresh(id: string): Promise<void> {
    const row = await this.store.byRowId(id);
    if (!row || this.inFlight.has(row.id) || !IN_FLIGHT.has(row.status)) return;
    await this.lookup(row, 'provider-sync');
  }

  /** The same transaction_id again: the earlier request's result, nothing new is started. */
  private async repeat(
    tenantId: string,
    request: PosTransactionRequest,
    waitMs: number,
  ): Promise<PosReply> {
    const row = await this.store.byTransactionId(tenantId, request.transaction_id);
    if (!row || !sameRequest(dataOf(row).request, request))
      throw new ProblemException({
        status: 422,
        type: 'urn:portico:problem:idempotency-key-reused',
        title: 'Idempotency key reused',
        detail: `transactionId ${request.transaction_id} was used for another request; a new payment or void needs a new transactionId`,
      });
    // An Idempotency-Key first seen here follows the transaction as well, not this answer.
    await bindIdempotentResource(`${POS_TRANSACTIONS}${request.transaction_id}`);
    // Not decided within the wait: what GET shows now (the provider's INITIATING or PENDING).
    const local = this.inFlight.get(row.id);
    const settled = local ? await this.within(local, waitMs) : undefined;
    return this.reply(row, settled ?? (await this.current(row)));
  }

  /** Sends the transaction and settles its row; never rejects (its outcome is an Outcome). */
  private async send(row: PosRow): Promise<Outcome> {
    const { request } = dataOf(row);
    let answer: UpstreamAnswer<PosTransactionResult>;
    try {
      answer = await this.store.call(row.tenantId, 'createPosTransaction', { json: request }, row);
    } catch (error) {
      return this.unanswered(row, error);
    }
    try {
      return await this.answered(row, answer);
    } catch (error) {
      // The provider answered but its answer could not be stored: the row stays in flight, and a read
      // of the transaction (or the resolver) takes the provider's record; never "not sent".
      this.logger.error(
        { err: error, cardResourceId: row.id, upstreamStatus: answer.status },
        'POS answer not stored; the row is settled from the provider later',
      );
      return { pending: {} };
    }
  }

  /** What the provider answered, stored. */
  private async answered(
    row: PosRow,
    answer: UpstreamAnswer<PosTransactionResult>,
  ): Promise<Outcome> {
    if (answer.status === 200 && answer.data) {
      const result = answer.data;
      await this.store.settleResult(row, result, 'upstream-answered');
      return { result };
    }
    if (answer.messages[0]?.code === '10004') {
      // The terminal did not report within the provider's hold: it may still do so.
      await this.store.transition(row, 'unknown', 'terminal-did-not-report');
      return { pending: { status: 'PENDING' } };
    }
    const refusal = refusalOf(answer);
    await this.store.refuse(row, refusal);
    return { problem: refusalProblem(refusal) };
  }

  /** The call failed in the seam: certainly not sent (failed), or in doubt and looked up by its id. */
  private async unanswered(row: PosRow, error: unknown): Promise<Outcome> {
    if (!outcomeUnknown(error)) {
      await this.store.transition(row, 'failed', 'upstream-not-sent').catch(() => undefined);
      return { problem: error as ProblemException };
    }
    await this.store.transition(row, 'unknown', 'upstream-outcome-unknown').catch(() => false);
    // The provider's own handle settles it: the transaction exists under this id, or it does not.
    return this.lookup(row, 'found-by-transaction-id').catch(() => ({ pending: {} }));
  }

  /** The row's outcome as stored, or read from the provider while it is in flight. */
  private async current(row: PosRow): Promise<Outcome> {
    const data = dataOf(row);
    if (row.status === 'failed')
      return { problem: data.refusal ? refusalProblem(data.refusal) : notMade(row) };
    // A void and its payment settled apart (a fault between the two writes) are mended here.
    await this.store.voidedIfSo(row);
    const result = IN_FLIGHT.has(row.status) ? undefined : resultOf(row);
    if (result) return { result };
    return this.lookup(row, 'upstream-status').catch(() => ({ pending: data.result ?? {} }));
  }

  /**
   * Reads the transaction at the provider by its transaction_id and settles the row: decided, it is
   * settled; unknown to the provider once Portico's call is over, it was never made; otherwise it is
   * still in flight. A failed read throws (still in doubt).
   */
  private async lookup(row: PosRow, cause: string): Promise<Outcome> {
    const answer = await this.store.call(
      row.tenantId,
      'getPosTransaction',
      { path: { transactionId: dataOf(row).request.transaction_id } },
      row,
    );
    const fresh = await this.store.reload(row);
    if (answer.status === 200 && answer.data) {
      const result = answer.data;
      if (FINAL.has(result.status)) {
        const settled =
          IN_FLIGHT.has(fresh.status) && (await this.store.settleResult(fresh, result, cause));
        return { result, settled };
      }
      if (result.status === 'DEVICE_NOT_CONNECTED') {
        const refusal = { status: 404, code: '10006', title: 'The POS Device is not connected' };
        if (IN_FLIGHT.has(fresh.status)) await this.store.refuse(fresh, refusal);
        return { problem: refusalProblem(refusal) };
      }
      return { pending: result };
    }
    const callOver =
      fresh.status === 'unknown' || ageMs(fresh) > this.config.upstreams.pos.paymentDeadlineMs;
    if (answer.messages[0]?.code === '10005' && callOver) {
      await this.store.transition(fresh, 'failed', `${cause}:not-at-provider`);
      return { problem: notMade(fresh) };
    }
    return { pending: dataOf(fresh).result ?? {} };
  }

  private async within(outcome: Promise<Outcome>, waitMs: number): Promise<Outcome | undefined> {
    const controller = new AbortController();
    const timeout = sleep(waitMs, undefined, { signal: controller.signal }).catch(() => undefined);
    try {
      return await Promise.race([outcome, timeout]);
    } finally {
      controller.abort();
    }
  }

  private reply(row: PosRow, outcome: Outcome | undefined): PosReply {
    const { request } = dataOf(row);
    const location = `${POS_TRANSACTIONS}${request.transaction_id}`;
    if (outcome && 'problem' in outcome) throw outcome.problem;
    if (outcome && 'result' in outcome) return { status: 200, body: outcome.result, location };
    return { status: 202, location, body: undecided(request, outcome?.pending ?? {}) };
  }
}

/** A transaction the terminal has not decided: what was asked, with what the provider shows so far. */
function undecided(
  request: PosTransactionRequest,
  pending: Partial<PosTransactionResult>,
): PosTransactionResult {
  const { transaction_id, amount, currency, type, terminal } = request;
  const tip = request.type === 'payment' ? request.tip : undefined;
  const original_transaction_id =
    request.type === 'void' ? request.original_transaction_id : undefined;
  return {
    transaction_id,
    currency,
    type,
    terminal,
    ...(amount === undefined ? {} : { amount }),
    ...(tip === undefined ? {} : { tip }),
    ...(original_transaction_id === undefined ? {} : { original_transaction_id }),
    ...pending,
    status: pending.status ?? 'INITIATING',
  };
}

const ageMs = (row: PosRow) => Date.now() - row.createdAt.getTime();

function sameRequest(a: PosTransactionRequest, b: PosTransactionRequest): boolean {
  const canonical = (value: PosTransactionRequest) =>
    JSON.stringify(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return canonical(a) === canonical(b);
}
