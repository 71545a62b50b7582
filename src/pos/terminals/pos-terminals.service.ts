import { Injectable } from '@nestjs/common';
import { ProblemException } from '#src/platform/errors/problem.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
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

  /**
   * The provider's pending list of an ERP-linked terminal. Its constraints are said as an app can act on
   * them: a reversed range is refused before the call (the provider's 10001); its 10003 (unknown,
   * disabled, or not linked to an ERP: the terminal object does not show the link) about a terminal the
   * merchant has, enabled, names the terminal and the link it lacks.
   */
  async pending(
    tenantId: string,
    terminal: string,
    query: PosQueryOf<'listPendingPosTransactions'>,
  ) {
    if (query.from && query.to && query.to < query.from)
      throw new ValidationFailedException(
        [{ field: 'to', reason: `to must be a day not before from (${query.from})` }],
        'request query',
      );
    const answer = await this.store.call(tenantId, 'listPendingPosTransactions', {
      path: { terminalToken: terminal },
      query,
    });
    if (
      answer.status === 422 &&
      answer.messages[0]?.code === '10003' &&
      (await this.enabled(tenantId, terminal))
    ) {
      const problem = refusalProblem(refusalOf(answer));
      throw new ProblemException({
        ...problem.init,
        detail: `${terminal} is not linked to an ERP system: only a terminal linked to one has a pending list (10003)`,
        errors: [
          {
            field: 'terminal',
            reason: `terminal must be linked to an ERP system (ask the provider to link ${terminal} to the merchant's ERP)`,
          },
        ],
      });
    }
    return pageOf(answer);
  }

  /**
   * Whether the merchant has this terminal, enabled: then the provider's 10003 on its pending list can
   * only mean it is not linked to an ERP. Read from the terminal list (at most 20 pages of 50).
   */
  private async enabled(tenantId: string, terminal: string): Promise<boolean> {
    for (let page = 1; page <= 20; page++) {
      const list = await this.list(tenantId, { page, limit: 50 });
      const found = list.items.find((item) => item.token === terminal);
      if (found) return found.status === 'enabled';
      if (page * 50 >= list.total_count) return false;
    }
    return false;
  }
}

/** The page a 200 carries (the seam checked it against pos.yaml); a refusal as problem+json. */
function pageOf<T>(answer: UpstreamAnswer<T>): T {
  if (answer.status !== 200) throw refusalProblem(refusalOf(answer));
  return answer.data as T;
}
