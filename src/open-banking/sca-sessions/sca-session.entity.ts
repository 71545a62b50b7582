import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { SubjectKind } from '#src/audit/trail/status-change.entity.js';

/** The single-use state that binds the bank's redirect back to one consent or payment. Only its hash is stored. */
@Entity({ name: 'sca_sessions' })
export class ScaSession {
  @PrimaryColumn({ name: 'state_hash', type: 'varchar', length: 64 })
  stateHash: string;

  @Column({ name: 'subject_kind', type: 'varchar', length: 8 })
  subjectKind: SubjectKind;

  @Column({ name: 'subject_id', type: 'uuid' })
  subjectId: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;
}
