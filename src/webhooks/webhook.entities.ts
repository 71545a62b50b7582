import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryColumn,
  PrimaryGeneratedColumn,
} from 'typeorm';

/** Where a tenant's app receives events, which ones, and the secrets that sign them. */
@Entity({ name: 'webhook_endpoints' })
@Index(['tenantId', 'createdAt'])
export class WebhookEndpoint {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 2000 })
  url: string;

  @Column({ name: 'event_types', type: 'jsonb', default: [] })
  eventTypes: string[];

  @Column({ type: 'varchar', length: 200, nullable: true })
  description: string | null;

  /**
   * The signing secret (`whsec_` + base64 of 32 random bytes), sealed with SECRETS_KEY for this endpoint
   * (webhook-secrets.ts). A row written before secrets were sealed holds the secret itself, until its
   * next rotation.
   */
  @Column({ name: 'secret_sealed', type: 'varchar', length: 200 })
  secretSealed: string;

  /** The secret before the last rotation, sealed; it signs too until previousSecretExpiresAt. */
  @Column({ name: 'previous_secret_sealed', type: 'varchar', length: 200, nullable: true })
  previousSecretSealed: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Removed endpoints are kept (their attempts name them) but receive nothing more. */
  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt: Date | null;

  /** Since when every attempt has failed (null: the last one was delivered, or none failed yet). */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures: number;

  /** The endpoint's own back-off: none of its deliveries is attempted before this. */
  @Column({ name: 'retry_at', type: 'timestamptz', nullable: true })
  retryAt: Date | null;

  /** Paused after failing for WEBHOOK_PAUSE_AFTER_MS: its deliveries wait until it is resumed. */
  @Column({ name: 'paused_at', type: 'timestamptz', nullable: true })
  pausedAt: Date | null;

  /** When a worker last took deliveries of it: the least recently served endpoint goes first. */
  @Column({ name: 'last_claimed_at', type: 'timestamptz', nullable: true })
  lastClaimedAt: Date | null;
}

export type WebhookEndpointStatus = 'active' | 'failing' | 'paused';

export const endpointStatus = (endpoint: WebhookEndpoint): WebhookEndpointStatus =>
  endpoint.pausedAt ? 'paused' : endpoint.failingSince ? 'failing' : 'active';

/** One event, written in the transaction of the change it reports (the outbox). */
@Entity({ name: 'webhook_events' })
@Index(['tenantId', 'createdAt'])
@Index(['tenantId', 'resourceId'])
@Index(['tenantId', 'providerId'])
export class WebhookEvent {
  /** Also the `webhook-id` header: the same for every attempt and replay. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 64 })
  type: string;

  /** The Portico id of the consent or payment the event is about. */
  @Column({ name: 'resource_id', type: 'uuid', nullable: true })
  resourceId: string | null;

  /** The provider's id of a card, marketplace or POS resource (pmt_…, ref_…, a POS transaction_id). */
  @Column({ name: 'provider_id', type: 'varchar', length: 64, nullable: true })
  providerId: string | null;

  /**
   * The event's number among its resource's events (1, 2, 3… in the order the changes committed); null
   * for an event about no resource, and for events recorded before events were numbered.
   */
  @Column({ type: 'integer', nullable: true })
  sequence: number | null;

  /** The JSON body sent, exactly as signed. */
  @Column({ type: 'text' })
  body: string;

  /** Events that must exist once only (consent.renewal_due) carry a key: a second insert is a no-op. */
  @Index({ unique: true })
  @Column({ name: 'dedupe_key', type: 'varchar', length: 200, nullable: true })
  dedupeKey: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** The last sequence number given to an event of each resource (WebhookEvent.sequence). */
@Entity({ name: 'webhook_event_sequences' })
export class WebhookEventSequence {
  /** A consent, payment, provider resource or webhook endpoint: any resource events are about. */
  @PrimaryColumn({ name: 'resource_id', type: 'uuid' })
  resourceId: string;

  @Column({ type: 'integer' })
  last: number;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event to one endpoint (a replay is a new delivery): attempted until a 2xx or dead-lettered. */
@Entity({ name: 'webhook_deliveries' })
// What the worker's selection reads: an endpoint's due deliveries, and its attempts in flight.
@Index('IDX_webhook_deliveries_pending', ['endpointId', 'nextAttemptAt'], {
  where: "status = 'pending'",
})
@Index('IDX_webhook_deliveries_leased', ['endpointId'], { where: 'lease_token IS NOT NULL' })
@Index(['eventId'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @Column({ name: 'endpoint_id', type: 'uuid' })
  endpointId: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 12 })
  status: DeliveryStatus;

  /** Attempts claimed so far (the one in flight included). */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz' })
  nextAttemptAt: Date;

  /** Until when the worker that claimed the current attempt owns it. */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @Column({ name: 'lease_token', type: 'uuid', nullable: true })
  leaseToken: string | null;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;

  @Column({ type: 'boolean', default: false })
  replay: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export const ATTEMPT_OUTCOMES = ['delivered', 'failed', 'timeout', 'lease-expired'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * Every attempt, written when it is claimed (outcome null: in flight) and completed after. One row per
 * (delivery, attempt number): a second worker can never claim the same attempt.
 */
@Entity({ name: 'webhook_attempts' })
@Index(['deliveryId', 'attempt'], { unique: true })
@Index(['eventId'])
export class WebhookAttempt {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @Column({ name: 'endpoint_id', type: 'uuid' })
  endpointId: string;

  @Column({ type: 'integer' })
  attempt: number;

  /** Which replica ran it (host/pid). */
  @Column({ type: 'varchar', length: 100, nullable: true })
  worker: string | null;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome: AttemptOutcome | null;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs: number | null;

  /** Why it failed, truncated to 500 characters. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  error: string | null;
}

export const WEBHOOK_ENTITIES = [
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventSequence,
  WebhookDelivery,
  WebhookAttempt,
];
