import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { components } from '#src/generated/psd2.js';
import { ScaSubjectColumns } from '../sca-sessions/sca-subject.columns.js';

/** ISO 20022 statuses from the bank, and Portico's own `creating` / `failed` before the bank has one. */
export type PaymentStatus = string;

@Entity({ name: 'payments' })
@Index(['tenantId', 'createdAt'])
/** A payment initiated by a tenant's app, with the bank's id once known. */
export class Payment extends ScaSubjectColumns {
  /** Until when a resolver replica works this row (writes in doubt only). */
  @Column({ name: 'resolver_lease_until', type: 'timestamptz', nullable: true })
  resolverLeaseUntil: Date | null;

  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'brand_id', type: 'varchar', length: 128 })
  brandId: string;

  /** Canonical product name (aliases are normalised). */
  @Column({ name: 'payment_product', type: 'varchar', length: 64 })
  paymentProduct: string;

  @Column({ name: 'upstream_payment_id', type: 'varchar', length: 128, nullable: true })
  upstreamPaymentId: string | null;

  /** PaymentDetails as sent upstream. */
  @Column({ type: 'jsonb' })
  details: components['schemas']['PaymentDetails'];

  @Column({ type: 'varchar', length: 8 })
  status: PaymentStatus;
}
