import { Injectable } from '@nestjs/common';
import { PosStore } from '../store/pos-store.service.js';
import { refusalOf, refusalProblem } from '../transactions/pos-refusal.js';

/** The tenant's terminals and, for ERP reconciliation, the transactions a terminal did not report. */
@Injectable()
export class PosTerminalsService {
  constructor(private readonly store: PosStore) {}

  async list(tenantId: string, query: Record<string, string | number>) {
    const answer = await this.store.call(tenantId, 'listPosTerminals', { query });
    if (answer.status !== 200) throw refusalProblem(refusalOf(answer));
    return answer.data;
  }

  async pending(tenantId: string, terminal: string, query: Record<string, string | number>) {
    const answer = await this.store.call(tenantId, 'listPendingPosTransactions', {
      path: { terminalToken: terminal },
      query,
    });
    if (answer.status !== 200) throw refusalProblem(refusalOf(answer));
    return answer.data;
  }
}
