import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { API_KEY_ROLES, type ApiKeyRole } from './api-key-roles.js';
import { Tenant } from './tenant.entity.js';

export { API_KEY_ROLES, type ApiKeyRole };

/** An API key, stored only as the SHA-256 of the key; the key itself is shown once, at issue. */
@Entity({ name: 'api_keys' })
@Check('CHK_api_keys_role', `"role" IN (${API_KEY_ROLES.map((role) => `'${role}'`).join(', ')})`)
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  @Index()
  tenantId: string;

  @ManyToOne(() => Tenant, (tenant) => tenant.apiKeys, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id' })
  tenant: Relation<Tenant>;

  /** Public part of the key (`ptk_<prefix>_…`), used to find the row. */
  @Column({ type: 'varchar', length: 8, unique: true })
  prefix: string;

  @Column({ name: 'secret_hash', type: 'varchar', length: 64 })
  secretHash: string;

  @Column({ type: 'varchar', length: 16 })
  role: ApiKeyRole;

  @Column({ type: 'varchar', length: 100, default: '' })
  label: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
