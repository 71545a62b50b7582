import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { JsonObject } from '../platform/common/json.js';

/**
 * What a run compares: `card` the card API's payments and refunds, `customers`, `notifications` (hosted
 * payment links), `marketplace` its sellers, transfers, reversals and payouts; `open-banking` the bank's
 * consents and payments and `pos` the terminals' transactions, read by id (docs/reconciliation.md).
 */
export const RECONCILIATION_CAPABILITIES = [
  'card',
  'customers',
  'notifications',
  'marketplace',
  'open-banking',
  'pos',
] as const;
export type ReconciliationCapability = (typeof RECONCILIATION_CAPABILITIES)[number];

/** Why a run ran: the day after, the rolling recent window, or an operator's request (API or CLI). */
export const RUN_TRIGGERS = ['daily', 'recent', 'on-demand'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** `running` under its lease; `interrupted` when its process died and its lease lapsed. */
export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'interrupted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * The classes a resource falls in. `moved` and `adopted` are settled by the run; the last three are
 * drifts: flagged, never overwritten or deleted.
 */
export const RECONCILIATION_CLASSES = [
  'matched',
  'moved',
  'adopted',
  'amount-differs',
  'portico-ahead',
  'portico-only',
] as const;
export type ReconciliationClass = (typeof RECONCILIATION_CLASSES)[number];
export const DRIFT_CLASSES = ['amount-differs', 'portico-ahead', 'portico-only'] as const;
export type DriftClass = (typeof DRIFT_CLASSES)[number];

/** How many resources of a run fell in each class, and the rows left to the resolver (in doubt). */
export type RunCounts = Record<ReconciliationClass | 'in-doubt', number>;

/**
 * One reconciliation run of a tenant, a capability and a window of days (the provider's date filters,
 * inclusive): its lease while it runs (the row is the lease: one running run per window, one daily run
 * per day that is running or succeeded), then what it found.
 */
@Entity({ name: 'reconciliation_runs' })
@Index(['tenantId', 'startedAt'])
@Index('UQ_reconciliation_runs_running', ['tenantId', 'capability', 'windowFrom', 'windowTo'], {
  unique: true,
  where: "status = 'running'",
})
@Index('UQ_reconciliation_runs_daily', ['tenantId', 'capability', 'windowFrom'], {
  unique: true,
  where: "trigger = 'daily' AND status IN ('running', 'succeeded')",
})
export class ReconciliationRun {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 16 })
  capability: ReconciliationCapability;

  /** The first day of the window (UTC, inclusive). */
  @Column({ name: 'window_from', type: 'date' })
  windowFrom: string;

  /** The last day of the window (UTC, inclusive). */
  @Column({ name: 'window_to', type: 'date' })
  windowTo: string;

  @Column({ type: 'varchar', length: 12 })
  trigger: RunTrigger;

  @Column({ type: 'varchar', length: 12 })
  status: RunStatus;

  /** Until when the replica running it holds it; renewed after every page. */
  @Column({ name: 'lease_until', type: 'timestamptz' })
  leaseUntil: Date;

  @Column({ type: 'jsonb', nullable: true })
  counts: RunCounts | null;

  /** Calls made to the provider. */
  @Column({ type: 'integer', default: 0 })
  requests: number;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs: number | null;

  /** Why a failed run stopped. */
  @Column({ type: 'varchar', length: 300, nullable: true })
  error: string | null;

  @CreateDateColumn({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

/**
 * A difference between Portico's record and the provider's that a run flagged: both sides' values, kept
 * as found. One drift per resource, class and pair of values: found again by a later run, it is the same
 * drift (`key`), flagged once.
 */
@Entity({ name: 'reconciliation_drifts' })
@Index(['tenantId', 'detectedAt'])
@Index(['runId'])
@Index('UQ_reconciliation_drifts_key', ['key'], { unique: true })
export class ReconciliationDrift {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** SHA-256 of the tenant, the resource, the class and both sides' values. */
  @Column({ type: 'varchar', length: 64 })
  key: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 16 })
  capability: ReconciliationCapability;

  /** The kind of resource (`payment`, `refund`, `customer`, `transfer`, …). */
  @Column({ type: 'varchar', length: 16 })
  kind: string;

  @Column({ name: 'class', type: 'varchar', length: 16 })
  driftClass: DriftClass;

  /** Portico's row (provider_resources.id). */
  @Column({ name: 'resource_id', type: 'uuid', nullable: true })
  resourceId: string | null;

  /** The provider's id (`pmt_…`, `ref_…`). */
  @Column({ type: 'varchar', length: 64, nullable: true })
  token: string | null;

  /** Portico's values: status, amount, fee, refunded amount. */
  @Column({ type: 'jsonb' })
  portico: JsonObject;

  /** The provider's values (null: the provider answered not found). */
  @Column({ type: 'jsonb', nullable: true })
  provider: JsonObject | null;

  @CreateDateColumn({ name: 'detected_at', type: 'timestamptz' })
  detectedAt: Date;
}

export const RECONCILIATION_ENTITIES = [ReconciliationRun, ReconciliationDrift];
