import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export const IDEMPOTENCY_STATES = ['in_progress', 'completed'] as const;
export type IdempotencyState = (typeof IDEMPOTENCY_STATES)[number];

/**
 * One Idempotency-Key of one tenant: the request it was first used with (route and fingerprint) and,
 * once that request finished, the answer to replay. Keyed by tenant and key only, so a key reused on
 * another operation is refused as "another request" rather than silently starting a second one.
 */
@Entity({ name: 'idempotency_records' })
export class IdempotencyRecord {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key: string;

  /** `METHOD /route/:template` of the first request. */
  @Column({ type: 'varchar', length: 300 })
  route: string;

  /** SHA-256 (hex) of the canonical JSON of method, route, path parameters and body. */
  @Column({ type: 'char', length: 64 })
  fingerprint: string;

  @Column({ type: 'varchar', length: 16 })
  state: IdempotencyState;

  @Column({ name: 'response_status', type: 'int', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_body', type: 'jsonb', nullable: true })
  responseBody: unknown;

  @Column({ name: 'response_headers', type: 'jsonb', nullable: true })
  responseHeaders: Record<string, string> | null;

  /**
   * The resource the request wrote before calling the provider (`/v1/payments/{id}`): once set, the key
   * is bound to it and is never run again, even after a crash; repeats learn where to look instead.
   */
  @Column({ type: 'varchar', length: 200, nullable: true })
  resource: string | null;

  /** When the current attempt claimed the key: also its lease (an old `in_progress` is abandoned). */
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Past this, the record counts as absent; indexed so that the sweep of old rows stays cheap. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  @Index()
  expiresAt: Date;
}
