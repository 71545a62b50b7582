import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { TenantsService } from '../access/tenants/tenants.service.js';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { Scheduler } from '../platform/scheduler/scheduler.js';
import {
  ReconciliationDriftView,
  ReconciliationRunView,
  type CreateReconciliationRunRequest,
  type ReconciliationDriftPage,
  type ReconciliationDriftsQuery,
  type ReconciliationRunPage,
  type ReconciliationRunsQuery,
} from './reconciliation.dto.js';
import { RECONCILIATION_CAPABILITIES } from './reconciliation.entities.js';
import { ReconciliationRepository } from './reconciliation.repository.js';
import { ReconciliationService } from './reconciliation.service.js';

const DAY_MS = 86_400_000;
/** The widest window one run takes. */
export const MAX_WINDOW_DAYS = 31;

const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * When reconciliation runs: on the one scheduler, each tenant's previous day (once, whichever replica)
 * and its rolling recent window (once an interval across replicas); on an operator's demand (API, CLI).
 * And what the auditor reads of it.
 */
@Injectable()
export class ReconciliationRuns implements OnModuleInit {
  constructor(
    private readonly reconciliation: ReconciliationService,
    private readonly repository: ReconciliationRepository,
    private readonly tenants: TenantsService,
    private readonly scheduler: Scheduler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'reconciliation',
      intervalMs: this.config.reconciliation.intervalMs,
      run: () => this.due(),
    });
  }

  /**
   * One turn: for every capability and every tenant it is reconciled for (ReconciliationRepository.tenantsOf), the
   * previous day if not done, and the recent window.
   */
  async due(now = Date.now()): Promise<void> {
    const { intervalMs, recentDays } = this.config.reconciliation;
    const today = dayOf(now);
    const yesterday = dayOf(now - DAY_MS);
    const since = new Date(`${dayOf(now - Math.max(1, recentDays - 1) * DAY_MS)}T00:00:00Z`);
    for (const capability of RECONCILIATION_CAPABILITIES)
      for (const tenantId of await this.repository.tenantsOf(capability, since)) {
        try {
          await this.reconciliation.run(
            { tenantId, capability, from: yesterday, to: yesterday },
            'daily',
          );
          if (recentDays > 0)
            await this.reconciliation.run(
              { tenantId, capability, from: dayOf(now - (recentDays - 1) * DAY_MS), to: today },
              'recent',
              // Another replica's run of this window in this interval is this interval's.
              Math.floor(intervalMs * 0.9),
            );
        } catch (error) {
          this.logger.error(
            { err: error, tenantId, capability },
            'reconciliation of a tenant could not start',
          );
        }
      }
  }

  /** An operator's run of a window (the API's and the CLI's). */
  async onDemand(request: CreateReconciliationRunRequest): Promise<ReconciliationRunView> {
    const tenant = await this.tenants.findTenant(request.tenantId);
    const from = Date.parse(`${request.from}T00:00:00Z`);
    const to = Date.parse(`${request.to}T00:00:00Z`);
    if (
      Number.isNaN(from) ||
      Number.isNaN(to) ||
      to < from ||
      to - from >= MAX_WINDOW_DAYS * DAY_MS
    )
      throw new ProblemException({
        status: 400,
        type: PROBLEM_TYPES.validation,
        title: 'Validation failed',
        detail: `The window must be real days, from on or before to, at most ${MAX_WINDOW_DAYS} days`,
        extensions: {
          errors: [
            { field: 'to', reason: `to must be from to from + ${MAX_WINDOW_DAYS - 1} days` },
          ],
        },
      });
    const run = await this.reconciliation.run(
      {
        tenantId: tenant.id,
        capability: request.capability ?? 'card',
        from: request.from,
        to: request.to,
      },
      'on-demand',
    );
    if (!run)
      throw new ProblemException({
        status: 409,
        type: PROBLEM_TYPES.conflict,
        title: 'Conflict',
        detail: `A reconciliation run of ${request.from} to ${request.to} is running for this tenant; its outcome will be in GET /v1/audit/reconciliation/runs`,
      });
    return ReconciliationRunView.of(run);
  }

  async listRuns(query: ReconciliationRunsQuery): Promise<ReconciliationRunPage> {
    const page = await this.repository.pageRuns(query);
    return { ...page, items: page.items.map((run) => ReconciliationRunView.of(run)) };
  }

  async listDrifts(query: ReconciliationDriftsQuery): Promise<ReconciliationDriftPage> {
    const page = await this.repository.pageDrifts(query);
    return { ...page, items: page.items.map((drift) => ReconciliationDriftView.of(drift)) };
  }
}
