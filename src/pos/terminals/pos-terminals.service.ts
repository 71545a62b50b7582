import { Injectable } from '@nestjs/common';
import type { UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import type { PosQueryOf } from '#src/upstreams/pos/pos.client.js';
import { PosStore } from '../store/pos-store.service.js';
import { refusalOf, refusalProblem } from '../transactions/pos-refusal.js';

/** The tenant's terminals and, for ERP reconciliation, the transactions a terminal did not report. */
@Injectable()
export class PosTerminalsService {
  constructor(private readonly store: PosStore) {}

  async list(tenantId: string, query: PosQueryOf<'listPosTerminals'>) {
    return pageOf(await this.store.call(tenantId, 'listPosTerminals', { query }));
  }

  async pending(
    tenantId: string,
    terminal: string,
    query: PosQueryOf<'listPendingPosTransactions'>,
  ) {
    return pageOf(
      await this.store.call(tenantId, 'listPendingPosTransactions', {
        path: { terminalToken: terminal },
        query,
      }),
    );
  }
}

/** The page a 200 carries (the seam checked it against pos.yaml); a refusal as problem+json. */
function pageOf<T>(answer: UpstreamAnswer<T>): T {
  if (answer.status !== 200) throw refusalProblem(refusalOf(answer));
  return answer.data as T;
}
