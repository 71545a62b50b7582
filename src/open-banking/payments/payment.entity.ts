import type { JsonObject } from '../../common/json.js';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** ISO 20022 statuses from the bank, and Portico's own `creating` / `failed` before the bank has one. */
export type PaymentStatus = string;

@Entity({ name: 'payments' })
@Index(['tenantId', 'createdAt'])
export class Payment {
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
  details: JsonObject;

  @Column({ type: 'varchar', length: 8 })
  status: PaymentStatus;

  @Column({ name: 'redirect_uri', type: 'varchar', length: 2000 })
  redirectUri: string;

  @Column({ name: 'nok_redirect_uri', type: 'varchar', length: 2000, nullable: true })
  nokRedirectUri: string | null;

  @Column({ name: 'psu_reference', type: 'varchar', length: 200, nullable: true })
  psuReference: string | null;

  @Column({ name: 'sca_redirect', type: 'varchar', length: 2000, nullable: true })
  scaRedirect: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'last_sca_at', type: 'timestamptz', nullable: true })
  lastScaAt: Date | null;
}
