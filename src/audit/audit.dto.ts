import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsUUID, Matches, Max, Min } from 'class-validator';
import { PRINTABLE_TEXT_SOURCE } from '../platform/common/text.js';
import { CONSENT_STATUSES, type ConsentStatus } from '../open-banking/consents/consent.entity.js';
import { BRAND_ID_PATTERN, ConsentView } from '../open-banking/consents/dto/consent.dto.js';

export class AuditConsentsQuery {
  @ApiPropertyOptional({ description: 'Only this tenant', format: 'uuid', maxLength: 36 })
  @IsOptional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({ description: 'Only this bank', pattern: BRAND_ID_PATTERN, maxLength: 128 })
  @IsOptional()
  @Matches(new RegExp(BRAND_ID_PATTERN), { message: 'brandId must be a brandId' })
  brandId?: string;

  @ApiPropertyOptional({ enum: CONSENT_STATUSES })
  @IsOptional()
  @IsIn(CONSENT_STATUSES)
  status?: ConsentStatus;

  @ApiPropertyOptional({
    description: 'Created at or after (ISO date-time)',
    format: 'date-time',
    maxLength: 40,
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  createdFrom?: string;

  @ApiPropertyOptional({
    description: 'Created before (ISO date-time)',
    format: 'date-time',
    maxLength: 40,
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  createdTo?: string;

  @ApiPropertyOptional({
    description: 'Page, from 1',
    default: 1,
    format: 'int32',
    minimum: 1,
    maximum: 100000,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100000)
  page?: number;

  @ApiPropertyOptional({
    description: 'Items a page',
    default: 50,
    format: 'int32',
    minimum: 1,
    maximum: 200,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  pageSize?: number;
}

export class AuditConsentView extends ConsentView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiPropertyOptional({
    description: "The bank's own id of the consent",
    maxLength: 128,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
  })
  upstreamConsentId: string | null;
}

export class AuditConsentPage {
  @ApiProperty({ type: [AuditConsentView], maxItems: 200 })
  items: AuditConsentView[];

  @ApiProperty({ format: 'int32', minimum: 1, maximum: 100000 })
  page: number;

  @ApiProperty({ format: 'int32', minimum: 1, maximum: 200 })
  pageSize: number;

  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  total: number;
}

export class StatusChangeView {
  @ApiProperty({ enum: [...CONSENT_STATUSES], nullable: true, type: String })
  from: string | null;

  @ApiProperty({ maxLength: 24, pattern: '^[A-Za-z]{3,24}$' })
  to: string;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  at: string;

  @ApiProperty({
    description:
      'created, upstream-created, sca-callback, deleted-by-app, valid-until-passed, upstream-status, reconciled-at-start, …',
    maxLength: 64,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  cause: string;

  @ApiPropertyOptional({ format: 'uuid', maxLength: 36, nullable: true, type: String })
  requestId: string | null;
}

export class AccessLogView {
  @ApiProperty({ format: 'date-time', maxLength: 40 })
  at: string;

  @ApiProperty({
    description: 'The facade operation',
    maxLength: 64,
    pattern: '^[A-Za-z]+$',
    example: 'getAccountBalances',
  })
  operation: string;

  @ApiPropertyOptional({
    maxLength: 128,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
  })
  accountId: string | null;

  @ApiProperty({ description: 'Whether the user was present (PSU-IP-Address sent)' })
  psuPresent: boolean;

  @ApiPropertyOptional({ format: 'uuid', maxLength: 36, nullable: true, type: String })
  requestId: string | null;

  @ApiPropertyOptional({
    description: "The bank's HTTP status; null when Portico refused the call itself",
    format: 'int32',
    minimum: 100,
    maximum: 599,
    nullable: true,
    type: Number,
  })
  upstreamStatus: number | null;

  @ApiProperty({
    description: 'ok, refused:<CODE> (by Portico), upstream:<CODE> (by the bank), failed:<status>',
    maxLength: 64,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  outcome: string;

  @ApiProperty({ format: 'int32', minimum: 0, maximum: 3600000 })
  latencyMs: number;
}

export class AuditConsentDetail extends AuditConsentView {
  @ApiProperty({ type: [StatusChangeView], maxItems: 1000 })
  history: StatusChangeView[];

  @ApiProperty({ description: 'Newest first, at most 500', type: [AccessLogView], maxItems: 500 })
  accessLog: AccessLogView[];
}
