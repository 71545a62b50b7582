import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Requests per API key per minute: the rate-limit counter, shared by every replica. */
@Entity({ name: 'api_key_usage' })
export class ApiKeyUsage {
  @PrimaryColumn({ name: 'key_id', type: 'uuid' })
  keyId: string;

  @PrimaryColumn({ name: 'window_start', type: 'timestamptz' })
  windowStart: Date;

  @Column({ type: 'integer' })
  count: number;
}
