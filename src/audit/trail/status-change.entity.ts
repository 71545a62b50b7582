import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const SUBJECT_KINDS = [
  'consent',
  'payment',
  'card_payment',
  'card_refund',
  'card_customer',
  'notification',
  'iris_session',
  'card_seller',
  'card_transfer',
  'card_reversal',
  'card_payout',
  'pos_payment',
  'pos_void',
  'wallet_token',
  'wallet_domain',
] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/** Append-only history of consent, payment and card resource statuses (a trigger refuses UPDATE and DELETE). */
@Entity({ name: 'status_changes' })
@Index(['subjectKind', 'subjectId', 'id'])
export class StatusChange {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'subject_kind', type: 'varchar', length: 16 })
  subjectKind: SubjectKind;

  @Column({ name: 'subject_id', type: 'uuid' })
  subjectId: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'from_status', type: 'varchar', length: 24, nullable: true })
  fromStatus: string | null;

  @Column({ name: 'to_status', type: 'varchar', length: 24 })
  toStatus: string;

  /** Why: `created`, `sca-callback`, `deleted-by-app`, `expired`, `upstream-status`, `reconciled-at-start`. */
  @Column({ type: 'varchar', length: 64 })
  cause: string;

  @Column({ name: 'request_id', type: 'uuid', nullable: true })
  requestId: string | null;

  @CreateDateColumn({ name: 'changed_at', type: 'timestamptz' })
  changedAt: Date;
}
