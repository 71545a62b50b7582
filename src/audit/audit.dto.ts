import { PageQuery } from '#src/platform/common/page-query.js';
import { PageInfo } from '../platform/common/page-info.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { DATE_OR_DATE_TIME, IsDateOrDateTime } from '../platform/common/date-or-date-time.js';
import { PRINTABLE_TEXT, PRINTABLE_TEXT_SOURCE } from '../platform/common/text.js';
import { CONSENT_STATUSES, type ConsentStatus } from '../open-banking/consents/consent.entity.js';
import { BRAND_ID_DOC, ConsentView } from '../open-banking/consents/dto/consent.dto.js';
import { PaymentView } from '../open-banking/payments/dto/payment.dto.js';
import {
  PROVIDER_RESOURCE_KINDS,
  RESOURCE_ORIGINS,
  type ProviderResourceKind,
  type ResourceOrigin,
} from '../provider-ledger/provider-resource.entity.js';

const PROVIDER_ID_SOURCE = '^[A-Za-z0-9_.:-]{1,64}$';

export const ACCESS_KINDS = ['consent', 'payment', 'card'] as const;
export type AccessKind = (typeof ACCESS_KINDS)[number];

/** Filters and paging every auditor list shares. */
export class AuditPageQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Only this tenant', format: 'uuid', maxLength: 36 })
  @IsOptional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({
    description:
      "Only tenants of this name (the tenant's display name, any case; names are not unique) or slug",
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
    example: 'Acme Budget',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(PRINTABLE_TEXT, { message: 'tenantName must not contain control characters' })
  tenantName?: string;

  @ApiPropertyOptional({
    description: 'Created at or after (an ISO date or date-time)',
    example: '2026-11-01T00:00:00Z',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('createdFrom')
  createdFrom?: string;

  @ApiPropertyOptional({
    description: 'Created before (an ISO date or date-time)',
    example: '2026-12-01T00:00:00Z',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('createdTo')
  createdTo?: string;
}

export class AuditConsentsQuery extends AuditPageQuery {
  @ApiPropertyOptional({ description: 'Only this bank', ...BRAND_ID_DOC })
  @IsOptional()
  @Matches(new RegExp(BRAND_ID_DOC.pattern), { message: 'brandId must be a brandId' })
  @MaxLength(BRAND_ID_DOC.maxLength)
  brandId?: string;

  @ApiPropertyOptional({ enum: CONSENT_STATUSES })
  @IsOptional()
  @IsIn(CONSENT_STATUSES)
  status?: ConsentStatus;
}

export class AuditPaymentsQuery extends AuditPageQuery {
  @ApiPropertyOptional({ description: 'Only this bank', ...BRAND_ID_DOC })
  @IsOptional()
  @Matches(new RegExp(BRAND_ID_DOC.pattern), { message: 'brandId must be a brandId' })
  @MaxLength(BRAND_ID_DOC.maxLength)
  brandId?: string;

  @ApiPropertyOptional({
    description:
      "Only payments in this status (the bank's transactionStatus, or creating, unknown, failed)",
    maxLength: 8,
    pattern: '^[A-Za-z]{4,8}$',
  })
  @IsOptional()
  @Matches(/^[A-Za-z]{4,8}$/, { message: 'status must be 4 to 8 letters' })
  status?: string;
}

export class AuditAccessesQuery extends AuditPageQuery {
  @ApiPropertyOptional({
    description:
      'Only calls under this kind of resource (`card`: calls to the card API, about a card payment, refund or customer or none)',
    enum: ACCESS_KINDS,
  })
  @IsOptional()
  @IsIn(ACCESS_KINDS)
  kind?: AccessKind;

  @ApiPropertyOptional({
    description: 'Only this facade operation',
    maxLength: 64,
    pattern: '^[A-Za-z]+$',
  })
  @IsOptional()
  @Matches(/^[A-Za-z]{1,64}$/, { message: 'operation must be an operation name' })
  operation?: string;
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

export class AuditConsentPage extends PageInfo {
  @ApiProperty({ type: [AuditConsentView], maxItems: 200 })
  items: AuditConsentView[];
}

export class StatusChangeView {
  @ApiProperty({ maxLength: 24, pattern: '^[A-Za-z]{3,24}$', nullable: true, type: String })
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
    description:
      'sent (the bank was called and no outcome was recorded: Portico stopped or is still waiting), ok, refused:<CODE> (by Portico), upstream:<CODE> (by the bank), failed:<status> (certainly not served), unknown:<status> (no answer: the bank may have served it)',
    maxLength: 64,
    pattern: PRINTABLE_TEXT_SOURCE,
    example: 'ok',
  })
  outcome: string;

  @ApiPropertyOptional({
    description: 'From the request to the outcome; null while the call is `sent`',
    format: 'int32',
    minimum: 0,
    maximum: 3600000,
    nullable: true,
    type: Number,
  })
  latencyMs: number | null;
}

export class AuditConsentDetail extends AuditConsentView {
  @ApiProperty({ type: [StatusChangeView], maxItems: 1000 })
  history: StatusChangeView[];

  @ApiProperty({ description: 'Newest first, at most 500', type: [AccessLogView], maxItems: 500 })
  accessLog: AccessLogView[];
}

export class AuditPaymentView extends PaymentView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiPropertyOptional({
    description: "The bank's own id of the payment",
    maxLength: 128,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
  })
  upstreamPaymentId: string | null;
}

export class AuditPaymentPage extends PageInfo {
  @ApiProperty({ type: [AuditPaymentView], maxItems: 200 })
  items: AuditPaymentView[];
}

export class AuditPaymentDetail extends AuditPaymentView {
  @ApiProperty({ type: [StatusChangeView], maxItems: 1000 })
  history: StatusChangeView[];

  @ApiProperty({ description: 'Newest first, at most 500', type: [AccessLogView], maxItems: 500 })
  accessLog: AccessLogView[];
}

export class AuditAccessView extends AccessLogView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiProperty({ enum: ACCESS_KINDS })
  kind: AccessKind;

  @ApiProperty({
    description:
      'The consent, payment or card resource (GET /v1/audit/card-resources/{id}) it was made under; null for a card call about none (a card token, the branches)',
    format: 'uuid',
    maxLength: 36,
    nullable: true,
    type: String,
  })
  resourceId: string | null;
}

export class AuditAccessPage extends PageInfo {
  @ApiProperty({ type: [AuditAccessView], maxItems: 200 })
  items: AuditAccessView[];
}

export class AuditCardResourcesQuery extends AuditPageQuery {
  @ApiPropertyOptional({ enum: PROVIDER_RESOURCE_KINDS })
  @IsOptional()
  @IsIn(PROVIDER_RESOURCE_KINDS)
  kind?: ProviderResourceKind;

  @ApiPropertyOptional({
    description:
      "Only in this status (the provider's, e.g. Captured, or Portico's creating, unknown, failed; active, deleted for customers)",
    maxLength: 24,
    pattern: '^[A-Za-z ]{1,24}$',
  })
  @IsOptional()
  @Matches(/^[A-Za-z ]{1,24}$/, { message: 'status must be 1 to 24 letters or spaces' })
  status?: string;

  @ApiPropertyOptional({
    description:
      "Only the resource with this provider's id (pmt_…, ref_…, sel_…, a POS transactionId), and those whose parent it is (a payment's refunds, a POS payment's voids)",
    maxLength: 64,
    pattern: PROVIDER_ID_SOURCE,
    example: 'pmt_3f9a2c',
  })
  @IsOptional()
  @Matches(new RegExp(PROVIDER_ID_SOURCE), {
    message: "providerId must be a provider's id (letters, digits, _ . : -)",
  })
  providerId?: string;
}

export class CardResourceParams {
  @ApiProperty({ format: 'uuid', maxLength: 36, description: "Portico's id of the card resource" })
  @IsUUID()
  cardResourceId: string;
}

export class AuditCardResourceView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiProperty({ enum: PROVIDER_RESOURCE_KINDS })
  kind: ProviderResourceKind;

  @ApiPropertyOptional({
    description:
      "The provider's id (pmt_, ref_, cus_); null while its creation is in doubt or failed",
    maxLength: 64,
    pattern: '^[A-Za-z0-9_]+$',
    nullable: true,
    type: String,
  })
  token: string | null;

  @ApiPropertyOptional({
    description: "A refund's payment",
    maxLength: 64,
    pattern: '^[A-Za-z0-9_]+$',
    nullable: true,
    type: String,
  })
  parentToken: string | null;

  @ApiPropertyOptional({
    description: "A payment's merchant reference (the app's, or portico-<id>)",
    maxLength: 120,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
  })
  merchantRef: string | null;

  /**
   * `portico`: made (or first read) through Portico; `provider`: found at the provider by reconciliation,
   * made outside Portico (docs/reconciliation.md).
   */
  @ApiProperty({ enum: RESOURCE_ORIGINS })
  origin: ResourceOrigin;

  @ApiProperty({ maxLength: 24, pattern: PRINTABLE_TEXT_SOURCE, example: 'Captured' })
  status: string;

  @ApiPropertyOptional({
    description: 'Cents',
    format: 'int32',
    minimum: 0,
    maximum: 99999999,
    nullable: true,
    type: Number,
  })
  amount: number | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  createdAt: string;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  updatedAt: string;
}

export class AuditCardResourcePage extends PageInfo {
  @ApiProperty({ type: [AuditCardResourceView], maxItems: 200 })
  items: AuditCardResourceView[];
}

export class AuditCardResourceDetail extends AuditCardResourceView {
  @ApiProperty({ type: [StatusChangeView], maxItems: 1000 })
  history: StatusChangeView[];

  @ApiProperty({ description: 'Newest first, at most 500', type: [AccessLogView], maxItems: 500 })
  accessLog: AccessLogView[];
}

export class AuditTenantsQuery {
  @ApiPropertyOptional({
    description: 'Only tenants whose name contains this (any case)',
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
    example: 'acme',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(PRINTABLE_TEXT, { message: 'name must not contain control characters' })
  name?: string;

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
    default: 200,
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

/** A tenant as the auditor sees it: its id and name, nothing else. */
export class AuditTenantView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({ maxLength: 200, pattern: PRINTABLE_TEXT_SOURCE, example: 'Acme Budget' })
  name: string;
}

export class AuditTenantPage extends PageInfo {
  @ApiProperty({ description: 'By name', type: [AuditTenantView], maxItems: 200 })
  items: AuditTenantView[];
}
