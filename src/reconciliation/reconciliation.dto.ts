import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, Matches } from 'class-validator';
import { AuditPageQuery } from '../audit/audit.dto.js';
import { PageInfo } from '../platform/common/page-info.js';
import {
  DRIFT_CLASSES,
  RECONCILIATION_CAPABILITIES,
  RUN_STATUSES,
  RUN_TRIGGERS,
  type DriftClass,
  type ReconciliationCapability,
  type ReconciliationDrift,
  type ReconciliationRun,
  type RunStatus,
  type RunTrigger,
} from './reconciliation.entities.js';

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const DAY_DOC = { format: 'date', maxLength: 10, pattern: DAY.source } as const;

export class CreateReconciliationRunRequest {
  /** The tenant whose records are reconciled. */
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  @IsUUID()
  tenantId: string;

  /** The window's first day (UTC, as the provider's `date_from`). */
  @ApiProperty({ ...DAY_DOC, example: '2026-11-27' })
  @Matches(DAY, { message: 'from must be a day, YYYY-MM-DD' })
  from: string;

  /** The window's last day, inclusive (at most 31 days after `from`). */
  @ApiProperty({ ...DAY_DOC, example: '2026-11-27' })
  @Matches(DAY, { message: 'to must be a day, YYYY-MM-DD' })
  to: string;

  /**
   * What is compared (default `card`: card payments and refunds; `customers`, `notifications`,
   * `marketplace`: sellers, transfers, reversals and payouts).
   */
  @ApiPropertyOptional({ enum: RECONCILIATION_CAPABILITIES, default: 'card' })
  @IsOptional()
  @IsIn(RECONCILIATION_CAPABILITIES)
  capability?: ReconciliationCapability;
}

/** How many resources fell in each class. */
export class ReconciliationCountsView {
  /** The same at both. */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  matched: number;

  /** Portico was behind: moved to the provider's status (history cause `reconciled`). */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  moved: number;

  /** At the provider only: adopted as a row of origin `provider` (cause `found-at-provider`). */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  adopted: number;

  /** Drift: amount, fee or refunded amount differ. */
  @ApiProperty({ name: 'amount-differs', format: 'int32', minimum: 0, maximum: 100000000 })
  'amount-differs': number;

  /** Drift: Portico's status is not one the provider's can follow. */
  @ApiProperty({ name: 'portico-ahead', format: 'int32', minimum: 0, maximum: 100000000 })
  'portico-ahead': number;

  /** Drift: the provider answers not found for a row Portico holds as made. */
  @ApiProperty({ name: 'portico-only', format: 'int32', minimum: 0, maximum: 100000000 })
  'portico-only': number;

  /** Left to the resolver: a Portico row in doubt stands for it. */
  @ApiProperty({ name: 'in-doubt', format: 'int32', minimum: 0, maximum: 100000000 })
  'in-doubt': number;
}

export class ReconciliationRunView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiProperty({ enum: RECONCILIATION_CAPABILITIES })
  capability: ReconciliationCapability;

  /** The window's first day. */
  @ApiProperty(DAY_DOC)
  from: string;

  /** The window's last day, inclusive. */
  @ApiProperty(DAY_DOC)
  to: string;

  @ApiProperty({ enum: RUN_TRIGGERS })
  trigger: RunTrigger;

  /** `running` under its lease; `interrupted`: its process died, the window is run again. */
  @ApiProperty({ enum: RUN_STATUSES })
  status: RunStatus;

  /** Null while running. */
  @ApiPropertyOptional({ type: ReconciliationCountsView, nullable: true })
  counts: ReconciliationCountsView | null;

  /** Calls made to the provider. */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  requests: number;

  @ApiPropertyOptional({
    format: 'int32',
    minimum: 0,
    maximum: 2147483647,
    nullable: true,
    type: Number,
  })
  durationMs: number | null;

  /** Why a failed run stopped. */
  @ApiPropertyOptional({ maxLength: 300, pattern: '^[^\\u0000]*$', nullable: true, type: String })
  error: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  startedAt: string;

  @ApiPropertyOptional({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  finishedAt: string | null;

  static of(run: ReconciliationRun): ReconciliationRunView {
    return {
      id: run.id,
      tenantId: run.tenantId,
      capability: run.capability,
      from: dayOf(run.windowFrom),
      to: dayOf(run.windowTo),
      trigger: run.trigger,
      status: run.status,
      counts: run.counts,
      requests: run.requests,
      durationMs: run.durationMs,
      error: run.error,
      startedAt: run.startedAt.toISOString(),
      finishedAt: run.finishedAt?.toISOString() ?? null,
    };
  }
}

/** A `date` column as the driver gives it (a string, or a Date at UTC midnight). */
function dayOf(value: string | Date): string {
  return typeof value === 'string' ? value.slice(0, 10) : value.toISOString().slice(0, 10);
}

/** One side's values of a resource. */
export class ReconciliationValuesView {
  /** Portico's status (or `creating`, `unknown`), or the provider's. */
  @ApiProperty({ maxLength: 24, pattern: '^[A-Za-z ]{1,24}$' })
  status: string;

  @ApiPropertyOptional({
    format: 'int32',
    minimum: 0,
    maximum: 2147483647,
    nullable: true,
    type: Number,
  })
  amount: number | null;

  @ApiPropertyOptional({
    format: 'int32',
    minimum: 0,
    maximum: 2147483647,
    nullable: true,
    type: Number,
  })
  fee: number | null;

  /** A payment's refunded amount. */
  @ApiPropertyOptional({
    format: 'int32',
    minimum: 0,
    maximum: 2147483647,
    nullable: true,
    type: Number,
  })
  refunded?: number | null;
}

export class ReconciliationDriftView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  id: string;

  /** The run that first found it. */
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  runId: string;

  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiProperty({ enum: RECONCILIATION_CAPABILITIES })
  capability: ReconciliationCapability;

  /** The kind of resource: `payment`, `refund`. */
  @ApiProperty({ maxLength: 16, pattern: '^[a-z_]{1,16}$' })
  kind: string;

  @ApiProperty({ enum: DRIFT_CLASSES })
  class: DriftClass;

  /** Portico's id of the resource (a card resource of the auditor's lists). */
  @ApiPropertyOptional({ format: 'uuid', maxLength: 36, nullable: true, type: String })
  porticoId: string | null;

  /** The provider's id (`pmt_…`, `ref_…`). */
  @ApiPropertyOptional({ maxLength: 64, pattern: '^[A-Za-z0-9_]+$', nullable: true, type: String })
  token: string | null;

  /** Portico's values when found. */
  @ApiProperty({ type: ReconciliationValuesView })
  portico: ReconciliationValuesView;

  /** The provider's values when found; null: the provider answered not found. */
  @ApiPropertyOptional({ type: ReconciliationValuesView, nullable: true })
  provider: ReconciliationValuesView | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  detectedAt: string;

  static of(drift: ReconciliationDrift): ReconciliationDriftView {
    return {
      id: drift.id,
      runId: drift.runId,
      tenantId: drift.tenantId,
      capability: drift.capability,
      kind: drift.kind,
      class: drift.driftClass,
      porticoId: drift.resourceId,
      token: drift.token,
      portico: drift.portico as unknown as ReconciliationValuesView,
      provider: drift.provider as unknown as ReconciliationValuesView | null,
      detectedAt: drift.detectedAt.toISOString(),
    };
  }
}

export class ReconciliationRunsQuery extends AuditPageQuery {
  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES)
  status?: RunStatus;
}

export class ReconciliationDriftsQuery extends AuditPageQuery {
  /** Only drifts first found by this run. */
  @ApiPropertyOptional({ format: 'uuid', maxLength: 36 })
  @IsOptional()
  @IsUUID()
  runId?: string;

  @ApiPropertyOptional({ enum: DRIFT_CLASSES })
  @IsOptional()
  @IsIn(DRIFT_CLASSES)
  class?: DriftClass;
}

export class ReconciliationRunPage extends PageInfo {
  @ApiProperty({ type: [ReconciliationRunView], maxItems: 200 })
  items: ReconciliationRunView[];
}

export class ReconciliationDriftPage extends PageInfo {
  @ApiProperty({ type: [ReconciliationDriftView], maxItems: 200 })
  items: ReconciliationDriftView[];
}
