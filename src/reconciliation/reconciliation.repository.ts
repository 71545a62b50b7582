import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { auditPage, type Page } from '../audit/audit-views.repository.js';
import type { JsonObject } from '../platform/common/json.js';
import { WebhookOutboxService } from '../webhooks/webhook-outbox.service.js';
import {
  ReconciliationDrift,
  ReconciliationRun,
  type DriftClass,
  type ReconciliationCapability,
  type RunCounts,
  type RunStatus,
  type RunTrigger,
} from './reconciliation.entities.js';
import type { ReconciliationDriftsQuery, ReconciliationRunsQuery } from './reconciliation.dto.js';

/** A tenant's window of days, as a run takes it. */
export interface RunWindow {
  tenantId: string;
  capability: ReconciliationCapability;
  /** YYYY-MM-DD, inclusive. */
  from: string;
  to: string;
}

/** A drift as a run found it. */
export interface FoundDrift {
  kind: string;
  driftClass: DriftClass;
  resourceId: string | null;
  token: string | null;
  portico: JsonObject;
  provider: JsonObject | null;
}

/**
 * The runs and drifts of reconciliation in SQL: a window taken under a lease (the run's row is the
 * lease), renewed, finished; a drift recorded once, with its webhook event in the same transaction.
 */
@Injectable()
export class ReconciliationRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: WebhookOutboxService,
  ) {}

  /**
   * Starts a run of the window under a lease of `leaseMs`, or answers undefined when another holds it
   * (running, lease alive), when its day's daily run is running or done (`daily`), or when a run of the
   * window started within `notWithinMs` (`recent`). A run whose process died (lease lapsed) is marked
   * `interrupted` first, and this one starts the window again.
   */
  async start(
    window: RunWindow,
    trigger: RunTrigger,
    leaseMs: number,
    notWithinMs = 0,
  ): Promise<ReconciliationRun | undefined> {
    const { tenantId, capability, from, to } = window;
    await this.dataSource.query(
      `UPDATE reconciliation_runs SET status = 'interrupted', finished_at = now()
        WHERE tenant_id = $1 AND capability = $2 AND window_from = $3 AND window_to = $4
          AND status = 'running' AND lease_until < now()`,
      [tenantId, capability, from, to],
    );
    const id = randomUUID();
    // ON CONFLICT without a target: either unique index (running; the day's daily run) refuses it.
    const inserted = (await this.dataSource.query(
      `INSERT INTO reconciliation_runs
         (id, tenant_id, capability, window_from, window_to, trigger, status, lease_until)
       SELECT $1::uuid, $2::uuid, $3::varchar, $4::date, $5::date, $6::varchar, 'running',
              now() + make_interval(secs => $7::double precision / 1000)
        WHERE NOT EXISTS (
          SELECT 1 FROM reconciliation_runs
           WHERE tenant_id = $2::uuid AND capability = $3::varchar
             AND window_from = $4::date AND window_to = $5::date
             AND started_at > now() - make_interval(secs => $8::double precision / 1000))
       ON CONFLICT DO NOTHING
       RETURNING id`,
      [id, tenantId, capability, from, to, trigger, leaseMs, notWithinMs],
    )) as { id: string }[];
    if (inserted.length === 0) return undefined;
    return this.dataSource.getRepository(ReconciliationRun).findOneByOrFail({ id });
  }

  /** Extends the run's lease; false when it is no longer this run's (lapsed and taken over). */
  async renew(runId: string, leaseMs: number): Promise<boolean> {
    const [, affected] = (await this.dataSource.query(
      `UPDATE reconciliation_runs
          SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
        WHERE id = $1 AND status = 'running'`,
      [runId, leaseMs],
    )) as [unknown, number];
    return affected === 1;
  }

  async finish(
    runId: string,
    outcome: { status: RunStatus; counts: RunCounts; requests: number; durationMs: number },
    error?: string,
  ): Promise<ReconciliationRun> {
    await this.dataSource.query(
      `UPDATE reconciliation_runs
          SET status = $2, counts = $3, requests = $4, duration_ms = $5, error = $6, finished_at = now()
        WHERE id = $1 AND status = 'running'`,
      [
        runId,
        outcome.status,
        JSON.stringify(outcome.counts),
        outcome.requests,
        outcome.durationMs,
        error?.slice(0, 300) ?? null,
      ],
    );
    return this.dataSource.getRepository(ReconciliationRun).findOneByOrFail({ id: runId });
  }

  /**
   * Records a drift and its `reconciliation.drift` event, in one transaction; the same drift (resource,
   * class, both sides' values) found again writes nothing. Answers whether it was new.
   */
  async flag(run: ReconciliationRun, drift: FoundDrift): Promise<boolean> {
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          run.tenantId,
          drift.kind,
          drift.resourceId ?? drift.token,
          drift.driftClass,
          drift.portico,
          drift.provider,
        ]),
      )
      .digest('hex');
    return this.dataSource.transaction(async (manager) => {
      const id = randomUUID();
      const inserted = (await manager.query(
        `INSERT INTO reconciliation_drifts
           (id, key, run_id, tenant_id, capability, kind, class, resource_id, token, portico, provider)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (key) DO NOTHING RETURNING id`,
        [
          id,
          key,
          run.id,
          run.tenantId,
          run.capability,
          drift.kind,
          drift.driftClass,
          drift.resourceId,
          drift.token,
          JSON.stringify(drift.portico),
          drift.provider === null ? null : JSON.stringify(drift.provider),
        ],
      )) as { id: string }[];
      if (inserted.length === 0) return false;
      await this.outbox.record(manager, {
        tenantId: run.tenantId,
        type: 'reconciliation.drift',
        resourceId: drift.resourceId,
        data: {
          driftId: id,
          runId: run.id,
          class: drift.driftClass,
          kind: drift.kind,
          token: drift.token,
          porticoId: drift.resourceId,
          portico: drift.portico,
          provider: drift.provider,
        },
        dedupeKey: `reconciliation.drift:${key}`,
      });
      return true;
    });
  }

  /**
   * The tenants a capability is reconciled for: open banking's and POS's with a resource recorded
   * since `since` (without one there is nothing to read by id), the others' with card merchant keys.
   */
  async tenantsOf(capability: ReconciliationCapability, since: Date): Promise<string[]> {
    const sql: Partial<Record<ReconciliationCapability, string>> = {
      'open-banking': `SELECT tenant_id FROM consents WHERE created_at >= $1
                        UNION SELECT tenant_id FROM payments WHERE created_at >= $1 ORDER BY 1`,
      pos: `SELECT DISTINCT tenant_id FROM provider_resources
             WHERE kind IN ('pos_payment', 'pos_void') AND created_at >= $1 ORDER BY 1`,
    };
    const query = sql[capability];
    if (!query) return this.cardTenants();
    const rows = (await this.dataSource.query(query, [since])) as { tenant_id: string }[];
    return rows.map((row) => row.tenant_id);
  }

  /** The tenants that have card merchant keys (whose card side can be reconciled). */
  async cardTenants(): Promise<string[]> {
    const rows = (await this.dataSource.query(
      'SELECT tenant_id FROM card_credentials ORDER BY tenant_id',
    )) as { tenant_id: string }[];
    return rows.map((row) => row.tenant_id);
  }

  pageRuns(query: ReconciliationRunsQuery): Promise<Page<ReconciliationRun>> {
    const builder = this.dataSource.getRepository(ReconciliationRun).createQueryBuilder('r');
    if (query.status) builder.andWhere('r.status = :status', { status: query.status });
    return auditPage(builder, 'r', query, 'started_at');
  }

  pageDrifts(query: ReconciliationDriftsQuery): Promise<Page<ReconciliationDrift>> {
    const builder = this.dataSource.getRepository(ReconciliationDrift).createQueryBuilder('d');
    if (query.runId) builder.andWhere('d.run_id = :runId', { runId: query.runId });
    if (query.class) builder.andWhere('d.class = :class', { class: query.class });
    return auditPage(builder, 'd', query, 'detected_at');
  }
}
