import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One call an app made under a consent or a payment, refused locally or sent upstream. Write-ahead: a
 * call to the bank is recorded (`sent`) before it is made and completed once, after it; a crash in
 * between leaves the `sent` row, never no row. A trigger refuses deletes and any other change.
 */
@Entity({ name: 'access_log' })
@Index(['consentId', 'id'])
@Index(['paymentId', 'id'])
@Index(['cardResourceId', 'id'])
export class AccessLogEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'consent_id', type: 'uuid', nullable: true })
  consentId: string | null;

  @Column({ name: 'payment_id', type: 'uuid', nullable: true })
  paymentId: string | null;

  /** The card resource (payment, refund, customer: a card_resources row) the call was about. */
  @Column({ name: 'card_resource_id', type: 'uuid', nullable: true })
  cardResourceId: string | null;

  /** The facade operation, e.g. getAccountBalances. */
  @Column({ type: 'varchar', length: 64 })
  operation: string;

  @Column({ name: 'account_id', type: 'varchar', length: 128, nullable: true })
  accountId: string | null;

  @Column({ name: 'psu_present', type: 'boolean' })
  psuPresent: boolean;

  @Column({ name: 'request_id', type: 'uuid', nullable: true })
  requestId: string | null;

  /** The provider's HTTP status; null when Portico refused the call itself or the provider never answered. */
  @Column({ name: 'upstream_status', type: 'integer', nullable: true })
  upstreamStatus: number | null;

  /**
   * `sent` (the bank was called; no outcome recorded yet, or ever, if Portico stopped meanwhile), `ok`,
   * `refused:<CODE>` (local), `upstream:<CODE or status>`, `failed:<status>`, `unknown:<status>`.
   */
  @Column({ type: 'varchar', length: 64 })
  outcome: string;

  /** From the app's request to the outcome; null while `sent`. */
  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs: number | null;

  /** Part of the key: the table is partitioned by month on it (AuditPartitionsService). */
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', primary: true })
  createdAt: Date;

  /**
   * When the call written ahead gives up at the latest, if it has a deadline of its own (a POS
   * payment); null: the upstreams' read deadline after `created_at`. The sealer waits for it.
   */
  @Column({ name: 'deadline_at', type: 'timestamptz', nullable: true })
  deadlineAt: Date | null;

  /**
   * The process that wrote the row ahead of its call (WRITER_ID): while its lease lives, a row still
   * `sent` is not sealed. Null for rows recorded whole, and for rows written before writers were known.
   */
  @Column({ type: 'uuid', nullable: true })
  writer: string | null;

  /** When the outcome was recorded; null while `sent`. */
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}
