import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  BoundResources,
  type BoundResourceState,
} from '#src/platform/idempotency/bound-resources.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { posFacade } from '../common/pos-api.js';
import { dataOf, PosStore, resultOf } from '../store/pos-store.service.js';
import { notMade, refusalProblem } from './pos-refusal.js';
import { POS_TRANSACTIONS, PosTransactionsService } from './pos-transactions.service.js';

const DECIDED = new Set(['CAPTURED', 'FAILED', 'CANCELLED', 'VOIDED']);

/**
 * Lets a repeat with the Idempotency-Key of a POS transaction whose first answer was 202 or "outcome
 * unknown" answer it once decided (as stored, without calling the provider): its result, or its refusal;
 * while undecided, 202 with what GET shows (the status the provider reports now).
 */
@Injectable()
export class PosBoundResources implements OnModuleInit {
  constructor(
    private readonly resources: BoundResources,
    private readonly store: PosStore,
    private readonly transactions: PosTransactionsService,
  ) {}

  onModuleInit(): void {
    this.resources.register({ prefix: POS_TRANSACTIONS, read: (t, id) => this.read(t, id) });
  }

  private async read(
    tenantId: string,
    transactionId: string,
  ): Promise<BoundResourceState | undefined> {
    const row = await this.store.byTransactionId(tenantId, transactionId);
    if (!row) return undefined;
    const data = dataOf(row);
    if (row.status === 'failed')
      return {
        state: 'failed',
        problem: data.refusal ? refusalProblem(data.refusal) : notMade(row),
      };
    const result = DECIDED.has(row.status) ? resultOf(row) : undefined;
    if (!result) return this.undecided(tenantId, transactionId);
    return { state: 'settled', status: 200, body: posFacade('PosTransactionResult', result) };
  }

  private async undecided(tenantId: string, transactionId: string): Promise<BoundResourceState> {
    try {
      const now = await this.transactions.get(tenantId, transactionId);
      const body = posFacade('PosTransactionResult', now.body);
      if (now.status === 200) return { state: 'settled', status: 200, body };
      return { state: 'settled', status: 202, body, headers: { Location: now.location } };
    } catch (error) {
      // GET's problems are decisions (a refusal, not made at the provider): the answer from now on.
      if (error instanceof ProblemException) return { state: 'failed', problem: error };
      throw error;
    }
  }
}
