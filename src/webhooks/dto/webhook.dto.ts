import { PageQuery } from '#src/platform/common/page-query.js';
import { PageInfo } from '#src/platform/common/page-info.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
} from 'class-validator';
import { DATE_OR_DATE_TIME, IsDateOrDateTime } from '#src/platform/common/date-or-date-time.js';
import { PRINTABLE_TEXT, PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';
import {
  WEBHOOK_EVENT_TYPE_NAMES,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../webhook-event-types.js';
import {
  ATTEMPT_OUTCOMES,
  DELIVERY_STATUSES,
  endpointStatus,
  type AttemptOutcome,
  type DeliveryStatus,
  type WebhookEndpoint,
  type WebhookEndpointStatus,
} from '../webhook.entities.js';

const URL_PATTERN = '^https?://[^\\s]+$';
const EVENT_TYPES_DOC = WEBHOOK_EVENT_TYPE_NAMES.map(
  (name) =>
    `\`${name}\`: ${WEBHOOK_EVENT_TYPES[name].about}${WEBHOOK_EVENT_TYPES[name].sent ? '' : ' (reserved: not sent yet)'}`,
).join('; ');
const STATUS_TEXT = { maxLength: 24, pattern: '^[A-Za-z]{1,24}$' };
/** The provider's id of a resource (pmt_…, ref_…, sel_…, a POS transaction_id) or Portico's UUID. */
const PROVIDER_ID_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';
const PROVIDER_ID_DOC = {
  maxLength: 64,
  pattern: PROVIDER_ID_PATTERN,
  nullable: true,
  type: String,
} as const;

export class EndpointParams {
  @ApiProperty({ description: "Portico's webhook endpoint id", format: 'uuid', maxLength: 36 })
  @IsUUID(undefined, { message: 'endpointId must be a webhook endpoint id (UUID)' })
  endpointId: string;
}

export class EventParams {
  @ApiProperty({
    description: "Portico's webhook event id (the webhook-id header)",
    format: 'uuid',
    maxLength: 36,
  })
  @IsUUID(undefined, { message: 'eventId must be a webhook event id (UUID)' })
  eventId: string;
}

export class CreateWebhookEndpointRequest {
  @ApiProperty({
    description:
      'Where events are POSTed. https (http too in sandbox mode); in production never a loopback, link-local, private or metadata address.',
    example: 'https://app.example.com/portico/webhooks',
    maxLength: 2000,
    pattern: URL_PATTERN,
  })
  @IsString()
  @MaxLength(2000)
  @Matches(new RegExp(URL_PATTERN), { message: 'url must be an http(s) URL' })
  url: string;

  @ApiProperty({
    description: `The event types sent to this endpoint. ${EVENT_TYPES_DOC}.`,
    enum: WEBHOOK_EVENT_TYPE_NAMES,
    isArray: true,
    minItems: 1,
    maxItems: WEBHOOK_EVENT_TYPE_NAMES.length,
    uniqueItems: true,
    example: ['consent.status_changed', 'consent.renewal_due', 'payment.status_changed'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPE_NAMES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_TYPE_NAMES, { each: true })
  eventTypes: WebhookEventType[];

  @ApiPropertyOptional({
    description: 'What the endpoint is for',
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @Matches(PRINTABLE_TEXT, { message: 'description must be printable text' })
  description?: string;
}

export class WebhookEndpointView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({ maxLength: 2000, pattern: URL_PATTERN })
  url: string;

  @ApiProperty({
    enum: WEBHOOK_EVENT_TYPE_NAMES,
    isArray: true,
    maxItems: WEBHOOK_EVENT_TYPE_NAMES.length,
  })
  eventTypes: WebhookEventType[];

  @ApiProperty({ maxLength: 200, pattern: PRINTABLE_TEXT_SOURCE, nullable: true, type: String })
  description: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  createdAt: string;

  @ApiProperty({
    description: 'Until when the secret before the last rotation still signs (a second signature)',
    format: 'date-time',
    maxLength: 40,
    nullable: true,
    type: String,
  })
  previousSecretExpiresAt: string | null;

  @ApiProperty({
    description:
      'active; failing (its last attempt failed: it backs off on its own, one attempt at a time); paused (failed for WEBHOOK_PAUSE_AFTER_MS, 5 days: nothing is sent, its events are kept until it is resumed)',
    enum: ['active', 'failing', 'paused'],
  })
  status: WebhookEndpointStatus;

  @ApiProperty({
    description: 'Since when every attempt to it has failed',
    format: 'date-time',
    maxLength: 40,
    nullable: true,
    type: String,
  })
  failingSince: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  pausedAt: string | null;

  static of(endpoint: WebhookEndpoint): WebhookEndpointView {
    const live =
      endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > new Date()
        ? endpoint.previousSecretExpiresAt.toISOString()
        : null;
    return {
      id: endpoint.id,
      url: endpoint.url,
      eventTypes: endpoint.eventTypes as WebhookEventType[],
      description: endpoint.description,
      createdAt: endpoint.createdAt.toISOString(),
      previousSecretExpiresAt: live,
      status: endpointStatus(endpoint),
      failingSince: endpoint.failingSince?.toISOString() ?? null,
      pausedAt: endpoint.pausedAt?.toISOString() ?? null,
    };
  }
}

export class WebhookEndpointWithSecret extends WebhookEndpointView {
  @ApiProperty({
    description:
      'The signing secret (Standard Webhooks: `whsec_` + base64). Shown only here, at creation and rotation: store it now.',
    maxLength: 100,
    pattern: '^whsec_[A-Za-z0-9+/=]+$',
  })
  secret: string;
}

export class WebhookEndpointList {
  /** How many endpoints the tenant has (the list is never paged). */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 1000 })
  totalCount: number;

  @ApiProperty({ type: [WebhookEndpointView], maxItems: 1000 })
  items: WebhookEndpointView[];
}

export class WebhookEventsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: WEBHOOK_EVENT_TYPE_NAMES, description: 'Only this event type' })
  @IsOptional()
  @IsIn(WEBHOOK_EVENT_TYPE_NAMES)
  type?: WebhookEventType;

  @ApiPropertyOptional({
    description:
      "Only events about this resource: Portico's id (a consent, payment or provider resource, UUID) or the provider's (pmt_…, ref_…, pnt_…, src_…, a POS transaction_id)",
    maxLength: 64,
    pattern: PROVIDER_ID_PATTERN,
  })
  @IsOptional()
  @Matches(new RegExp(PROVIDER_ID_PATTERN), {
    message: "resourceId must be Portico's id or the provider's id of a resource",
  })
  resourceId?: string;

  @ApiPropertyOptional({
    enum: DELIVERY_STATUSES,
    description: 'Only events with a delivery in this state (dead: dead-lettered)',
  })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  deliveryStatus?: DeliveryStatus;

  @ApiPropertyOptional({
    description: 'Created at or after (an ISO date or date-time)',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('createdFrom')
  createdFrom?: string;

  @ApiPropertyOptional({
    description: 'Created before (an ISO date or date-time)',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('createdTo')
  createdTo?: string;
}

/** What `data` may hold; each event type uses some of these (docs/audit-and-webhooks.md). */
export class WebhookEventData {
  @ApiPropertyOptional({ format: 'uuid', maxLength: 36 })
  consentId?: string;

  @ApiPropertyOptional({
    description:
      "payment.status_changed: Portico's id (UUID). card_payment.status_changed: the provider's (pmt_…), null while the payment has none (in doubt, or refused at its creation); iris_session.status_changed: the payment made from the session",
    ...PROVIDER_ID_DOC,
  })
  paymentId?: string | null;

  @ApiPropertyOptional({ description: 'card_refund.status_changed (ref_…)', ...PROVIDER_ID_DOC })
  refundId?: string | null;

  @ApiPropertyOptional({
    description: 'notification.status_changed (pnt_…)',
    ...PROVIDER_ID_DOC,
  })
  notificationId?: string | null;

  @ApiPropertyOptional({ description: 'iris_session.status_changed (src_…)', ...PROVIDER_ID_DOC })
  sessionId?: string | null;

  @ApiPropertyOptional({
    description: 'pos_transaction.status_changed: the transaction_id',
    ...PROVIDER_ID_DOC,
  })
  transactionId?: string | null;

  @ApiPropertyOptional({
    description:
      'pos_transaction.status_changed: the transactionId of the void of a payment that is `VOIDED`, null otherwise',
    ...PROVIDER_ID_DOC,
  })
  voidedBy?: string | null;

  @ApiPropertyOptional({
    description:
      "Card, notification, IRIS and POS events: Portico's id of the resource, in every event of it (the provider's id is null until the provider answered)",
    format: 'uuid',
    maxLength: 36,
  })
  porticoId?: string;

  @ApiPropertyOptional({
    description: "Card events: the payment's merchant_ref (null for the others)",
    maxLength: 120,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
  })
  merchantRef?: string | null;

  @ApiPropertyOptional({ description: 'webhook_endpoint.paused', format: 'uuid', maxLength: 36 })
  endpointId?: string;

  @ApiPropertyOptional({
    description: 'webhook_endpoint.paused: since when every attempt failed',
    format: 'date-time',
    maxLength: 40,
  })
  failingSince?: string;

  @ApiPropertyOptional({
    description: 'webhook_endpoint.paused',
    format: 'date-time',
    maxLength: 40,
  })
  pausedAt?: string;

  @ApiPropertyOptional({ description: 'The status before the change', ...STATUS_TEXT })
  previousStatus?: string;

  @ApiPropertyOptional({ description: 'The status after the change, or now', ...STATUS_TEXT })
  status?: string;

  @ApiPropertyOptional({
    description:
      'Why the status changed: sca-callback, upstream-status, upstream-created, deleted-by-app, valid-until-passed, resolver, …',
    maxLength: 64,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  cause?: string;

  @ApiPropertyOptional({
    description: 'consent.renewal_due: when the consent stops working unless renewed',
    format: 'date-time',
    maxLength: 40,
  })
  dueAt?: string;

  @ApiPropertyOptional({
    description:
      'consent.renewal_due: sca-renewal (RTS Art. 10a, 180 days after the last SCA) or valid-until',
    enum: ['sca-renewal', 'valid-until'],
  })
  reason?: string;

  @ApiPropertyOptional({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  scaRenewalDueAt?: string | null;

  @ApiPropertyOptional({ format: 'date', maxLength: 10, nullable: true, type: String })
  validUntil?: string | null;
}

/** The body POSTed to the endpoint (Standard Webhooks' suggested shape). */
export class WebhookPayload {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPE_NAMES })
  type: WebhookEventType;

  @ApiProperty({
    description:
      'When the change happened (its transaction: the time its status history shows), RFC 3339 in UTC',
    format: 'date-time',
    maxLength: 40,
  })
  timestamp: string;

  @ApiProperty({
    description:
      "The event's number among the events of its resource (1, 2, 3… in the order the changes were made; a number may be skipped, never reused). Deliveries can arrive in any order: keep the highest sequence handled per resource and drop an event with a lower one. Null for an event about no resource.",
    format: 'int32',
    minimum: 1,
    maximum: 2147483647,
    nullable: true,
    type: Number,
  })
  sequence: number | null;

  @ApiProperty({ type: WebhookEventData })
  data: WebhookEventData;
}

export class DeliveryCounts {
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 1000000 })
  pending: number;

  @ApiProperty({ format: 'int32', minimum: 0, maximum: 1000000 })
  delivered: number;

  @ApiProperty({ format: 'int32', minimum: 0, maximum: 1000000 })
  dead: number;

  @ApiProperty({ format: 'int32', minimum: 0, maximum: 1000000 })
  cancelled: number;
}

export class WebhookEventView {
  @ApiProperty({ description: 'Also the webhook-id header', format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPE_NAMES })
  type: WebhookEventType;

  @ApiProperty({
    description: "Portico's id of the resource the event is about",
    format: 'uuid',
    maxLength: 36,
    nullable: true,
    type: String,
  })
  resourceId: string | null;

  @ApiProperty({
    description:
      "The provider's id of that resource (pmt_…, ref_…, pnt_…, src_…, a POS transaction_id): null for open-banking resources and before the provider answered",
    ...PROVIDER_ID_DOC,
  })
  providerId: string | null;

  @ApiProperty({
    description: "The event's number among its resource's events (as in the payload)",
    format: 'int32',
    minimum: 1,
    maximum: 2147483647,
    nullable: true,
    type: Number,
  })
  sequence: number | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  createdAt: string;

  @ApiProperty({ type: WebhookPayload, description: 'The body sent, parsed' })
  payload: WebhookPayload;

  @ApiProperty({ type: DeliveryCounts, description: 'Deliveries of the event by state' })
  deliveries: DeliveryCounts;
}

export class WebhookEventPage extends PageInfo {
  @ApiProperty({ type: [WebhookEventView], maxItems: 200 })
  items: WebhookEventView[];
}

export class WebhookAttemptView {
  @ApiProperty({ format: 'int32', minimum: 1, maximum: 1000 })
  attempt: number;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  startedAt: string;

  @ApiProperty({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  finishedAt: string | null;

  @ApiProperty({
    description:
      'delivered (2xx), failed (another status or a network error), timeout, lease-expired (the worker stopped mid-attempt: retried), null while in flight',
    enum: ATTEMPT_OUTCOMES,
    nullable: true,
    type: String,
  })
  outcome: AttemptOutcome | null;

  @ApiProperty({ format: 'int32', minimum: 100, maximum: 599, nullable: true, type: Number })
  responseStatus: number | null;

  @ApiProperty({ format: 'int32', minimum: 0, maximum: 3600000, nullable: true, type: Number })
  latencyMs: number | null;

  @ApiProperty({ maxLength: 500, pattern: PRINTABLE_TEXT_SOURCE, nullable: true, type: String })
  error: string | null;
}

export class WebhookDeliveryView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({ format: 'uuid', maxLength: 36 })
  endpointId: string;

  @ApiProperty({ enum: DELIVERY_STATUSES })
  status: DeliveryStatus;

  @ApiProperty({ description: 'A replay asked for by the app', type: Boolean })
  replay: boolean;

  @ApiProperty({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  nextAttemptAt: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  deliveredAt: string | null;

  @ApiProperty({ type: [WebhookAttemptView], maxItems: 100 })
  attempts: WebhookAttemptView[];
}

export class WebhookEventDetail extends WebhookEventView {
  @ApiProperty({ type: [WebhookDeliveryView], maxItems: 1000 })
  deliveryList: WebhookDeliveryView[];
}

export class WebhookReplay {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  eventId: string;

  @ApiProperty({
    description: 'The new deliveries, one per endpoint now subscribed to the type',
    type: 'array',
    items: { type: 'string', format: 'uuid', maxLength: 36 },
    maxItems: 1000,
  })
  deliveryIds: string[];
}
