import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A tenant's merchant keys at the card provider, each sealed with AES-256-GCM (src/platform/secrets):
 * the secret key (every operation), the public key (card tokens from browsers and apps) and, later, the
 * POS key. The hints (`sk_…4f2a`) are what anyone is ever shown.
 */
@Entity({ name: 'card_credentials' })
export class CardCredentials {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'secret_key_sealed', type: 'text' })
  secretKeySealed: string;

  @Column({ name: 'secret_key_hint', type: 'varchar', length: 16 })
  secretKeyHint: string;

  @Column({ name: 'public_key_sealed', type: 'text', nullable: true })
  publicKeySealed: string | null;

  @Column({ name: 'public_key_hint', type: 'varchar', length: 16, nullable: true })
  publicKeyHint: string | null;

  /** Room for the point-of-sale interface's key (a later issue). */
  @Column({ name: 'pos_key_sealed', type: 'text', nullable: true })
  posKeySealed: string | null;

  @Column({ name: 'pos_key_hint', type: 'varchar', length: 16, nullable: true })
  posKeyHint: string | null;

  /** The sandbox merchant's id when Portico provisioned it; null for keys an operator set. */
  @Column({ name: 'merchant_id', type: 'varchar', length: 64, nullable: true })
  merchantId: string | null;

  /** `operator` (API or CLI) or `sandbox` (provisioned at tenant creation). */
  @Column({ type: 'varchar', length: 16 })
  source: string;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
