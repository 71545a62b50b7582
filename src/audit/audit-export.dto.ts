import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SUBJECT_KINDS } from './trail/status-change.entity.js';
import { VerificationReportView } from './audit-chain.dto.js';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { DATE_OR_DATE_TIME, IsDateOrDateTime } from '../platform/common/date-or-date-time.js';

export class AuditExportQuery {
  @ApiPropertyOptional({ enum: ['json', 'csv'], default: 'json' })
  @IsOptional()
  @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';

  @ApiPropertyOptional({ description: 'Only this tenant', format: 'uuid', maxLength: 36 })
  @IsOptional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({
    description: 'At or after (an ISO date or date-time)',
    example: '2026-11-01T00:00:00Z',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('from')
  from?: string;

  @ApiPropertyOptional({
    description: 'Before (an ISO date or date-time)',
    example: '2026-12-01T00:00:00Z',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('to')
  to?: string;
}

const TEXT = { maxLength: 64, pattern: '^[^\\u0000-\\u001F\\u007F]*$' } as const;

/** One row of the export: a status change or an access-log row, with the chain link sealing it. */
export class AuditExportRecord {
  @ApiProperty({ enum: ['status_change', 'access_log'] })
  kind: string;

  @ApiProperty({ description: 'Row id in its table', pattern: '^[0-9]{1,19}$', maxLength: 19 })
  id: string;

  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  at: string;

  @ApiProperty({
    description:
      'A status change: the kind of the resource whose status changed; an access: consent, payment or card (the card and POS interfaces)',
    enum: [...SUBJECT_KINDS, 'card'],
  })
  resourceKind: string;

  @ApiProperty({
    description: 'null for a card call about no resource (a card token, the branches)',
    format: 'uuid',
    maxLength: 36,
    nullable: true,
    type: String,
  })
  resourceId: string | null;

  @ApiPropertyOptional({ ...TEXT, nullable: true, type: String })
  operation: string | null;

  @ApiPropertyOptional({ ...TEXT, nullable: true, type: String })
  fromStatus: string | null;

  @ApiPropertyOptional({ ...TEXT, nullable: true, type: String })
  toStatus: string | null;

  @ApiPropertyOptional({ ...TEXT, nullable: true, type: String })
  cause: string | null;

  @ApiPropertyOptional({ format: 'uuid', maxLength: 36, nullable: true, type: String })
  requestId: string | null;

  @ApiPropertyOptional({ nullable: true, type: Boolean })
  psuPresent: boolean | null;

  @ApiPropertyOptional({
    format: 'int32',
    minimum: 100,
    maximum: 599,
    nullable: true,
    type: Number,
  })
  upstreamStatus: number | null;

  @ApiPropertyOptional({ ...TEXT, nullable: true, type: String })
  outcome: string | null;

  @ApiPropertyOptional({
    format: 'int32',
    minimum: 0,
    maximum: 3600000,
    nullable: true,
    type: Number,
  })
  latencyMs: number | null;

  @ApiPropertyOptional({
    description: 'The chain link sealing the row; null while not sealed yet',
    pattern: '^[0-9]{1,19}$',
    maxLength: 19,
    nullable: true,
    type: String,
  })
  chainSeq: string | null;

  @ApiPropertyOptional({ pattern: '^[0-9a-f]{64}$', maxLength: 64, nullable: true, type: String })
  chainHash: string | null;
}

export class AuditExportDocument {
  @ApiProperty({ type: VerificationReportView })
  verification: VerificationReportView;

  @ApiProperty({ type: [AuditExportRecord], maxItems: 1_000_000_000 })
  records: AuditExportRecord[];
}
