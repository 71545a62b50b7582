import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  BoundResources,
  type BoundResourceState,
} from '../../platform/idempotency/bound-resources.js';
import { posFacade } from '../common/pos-api.js';
import { PosStore, type PosRowData } from '../store/pos-store.service.js';
import { refusalProblem } from './pos-refusal.js';

export const POS_TRANSACTIONS = '/v1/pos/transactions/';

const DECIDED = new Set(['CAPTURED', 'FAILED', 'CANCELLED']);
const NOT_MADE = { status: 502, code: 'not-at-provider', title: 'Not made' };

/**
 * Lets a repeat with the Idempotency-Key of a POS transaction whose first answer was 202 or "outcome
 * unknown" answer it once decided (as stored, without calling the provider): its result, or its refusal.
 */
@Injectable()
export class PosBoundResources implements OnModuleInit {
  constructor(
    private readonly resources: BoundResources,
    private readonly store: PosStore,
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
    const data = row.data as PosRowData;
    if (row.status === 'failed')
      return { state: 'failed', problem: refusalProblem(data.refusal ?? NOT_MADE) };
    if (!DECIDED.has(row.status) || !data.result) return { state: 'in-doubt' };
    return { state: 'settled', status: 200, body: posFacade('PosTransactionResult', data.result) };
  }
}
