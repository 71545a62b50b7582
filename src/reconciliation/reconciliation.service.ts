import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { requestContext } from '../platform/logging/request-context.js';
import { Metrics } from '../platform/metrics/metrics.service.js';
import { LIST_KINDS } from './list-kinds.js';
import { ListReconciler } from './list-reconciler.js';
import { ByIdReconciler } from './by-id-reconciler.js';
import { OpenBankingKinds } from './open-banking-kinds.js';
import { PosKinds } from './pos-kinds.js';
import {
  RECONCILIATION_CLASSES,
  type ReconciliationRun,
  type RunCounts,
  type RunTrigger,
} from './reconciliation.entities.js';
import { ReconciliationRepository, type RunWindow } from './reconciliation.repository.js';
import type { RunContext } from './run-context.js';

/** A run whose lease another replica took over (it lapsed): this one stops, the other carries on. */
class LeaseLost extends Error {}

const emptyCounts = (): RunCounts =>
  Object.fromEntries([...RECONCILIATION_CLASSES, 'in-doubt'].map((name) => [name, 0])) as RunCounts;

/**
 * Reconciliation runs: one tenant, one capability, one window of days, under a lease in the database
 * (of N replicas one runs a window; a run whose process died is started again once its lease lapses),
 * at a request rate per tenant, recorded with what it found.
 */
@Injectable()
export class ReconciliationService {
  /** When each tenant may make its next provider call (this replica's share of the rate). */
  private readonly nextCallAt = new Map<string, number>();

  constructor(
    private readonly runs: ReconciliationRepository,
    private readonly lists: ListReconciler,
    private readonly byId: ByIdReconciler,
    private readonly openBanking: OpenBankingKinds,
    private readonly pos: PosKinds,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /**
   * Runs the window, unless another replica runs it or (`daily`, `recent`) it is done: then undefined.
   * A run's failure is recorded on its run (outcome `failed`), not thrown.
   */
  async run(
    window: RunWindow,
    trigger: RunTrigger,
    notWithinMs = 0,
  ): Promise<ReconciliationRun | undefined> {
    const { leaseMs } = this.config.reconciliation;
    const run = await this.runs.start(window, trigger, leaseMs, notWithinMs);
    if (!run) return undefined;
    const started = performance.now();
    const counts = emptyCounts();
    let requests = 0;
    const context: RunContext = {
      window,
      call: async (send) => {
        await this.turn(window.tenantId);
        requests += 1;
        // Each call has the upstream's deadline of its own: an operator's run (POST
        // /v1/reconciliation/runs) is one facade request, whose shared deadline would end a long run.
        const context = requestContext.getStore();
        return context
          ? requestContext.run({ ...context, upstreamDeadline: undefined }, send)
          : send();
      },
      pageDone: async () => {
        if (!(await this.runs.renew(run.id, leaseMs))) throw new LeaseLost();
      },
      count: (outcome) => {
        counts[outcome] += 1;
      },
      flag: async (drift) => {
        counts[drift.driftClass] += 1;
        if (await this.runs.flag(run, drift))
          this.metrics?.recordReconciliationDrift(drift.driftClass);
      },
    };
    const outcome = () => ({
      counts,
      requests,
      durationMs: Math.round(performance.now() - started),
    });
    try {
      if (window.capability === 'open-banking')
        await this.byId.reconcile(context, this.openBanking.kinds);
      else if (window.capability === 'pos') await this.byId.reconcile(context, this.pos.kinds);
      else await this.lists.reconcile(context, LIST_KINDS[window.capability] ?? []);
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.logger.warn(
          { runId: run.id },
          'reconciliation run lost its lease; another replica runs the window',
        );
        return run;
      }
      this.logger.error({ err: error, runId: run.id, ...window }, 'reconciliation run failed');
      const failed = await this.runs.finish(
        run.id,
        { status: 'failed', ...outcome() },
        error instanceof Error ? error.message : String(error),
      );
      this.metrics?.recordReconciliationRun(window.tenantId, 'failed', failed.durationMs ?? 0);
      return failed;
    }
    const done = await this.runs.finish(run.id, { status: 'succeeded', ...outcome() });
    this.metrics?.recordReconciliationRun(window.tenantId, 'succeeded', done.durationMs ?? 0);
    this.logger.info({ runId: run.id, ...window, counts, requests }, 'reconciliation run done');
    return done;
  }

  /** Waits for the tenant's next call slot (RECONCILIATION_REQUESTS_PER_SECOND). */
  private async turn(tenantId: string): Promise<void> {
    const gapMs = 1000 / this.config.reconciliation.requestsPerSecond;
    const now = Date.now();
    const at = Math.max(now, this.nextCallAt.get(tenantId) ?? 0);
    this.nextCallAt.set(tenantId, at + gapMs);
    if (at > now) await sleep(at - now);
  }
}
