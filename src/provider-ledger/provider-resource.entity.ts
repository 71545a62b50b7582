import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { SubjectKind } from '../audit/trail/status-change.entity.js';

/**
 * A JSON object as the `data` column holds it: a JsonObject, spelled so that TypeORM's typed writes
 * (insert, update) take it as it is.
 */
export type ProviderData = { [key: string]: NonNullable<unknown> | null | undefined };

/**
 * The kinds of rows the ledger's shared table holds, each with the kind of its status history
 * (status_changes.subject_kind, which names its webhook event). What a kind's `data` holds is its
 * capability's declaration (ResourceStore's kind map).
 */
export const PROVIDER_RESOURCE_SUBJECTS = {
  // card (src/card)
  payment: 'card_payment',
  refund: 'card_refund',
  customer: 'card_customer',
  notification: 'notification',
  iris_session: 'iris_session',
  // the marketplace (src/card/marketplace)
  seller: 'card_seller',
  transfer: 'card_transfer',
  reversal: 'card_reversal',
  payout: 'card_payout',
  // POS transactions (src/pos/): `token` is the transaction_id, `parent_token` a void's original.
  pos_payment: 'pos_payment',
  pos_void: 'pos_void',
  // wallets (src/card/wallets): a web-wallet tokenisation (`token` its ctn_), a device-wallet domain
  // (`token` the domain name, in lower case).
  wallet_token: 'wallet_token',
  wallet_domain: 'wallet_domain',
} as const satisfies Record<string, SubjectKind>;
export type ProviderResourceKind = keyof typeof PROVIDER_RESOURCE_SUBJECTS;

export const RESOURCE_ORIGINS = ['portico', 'provider'] as const;
export type ResourceOrigin = (typeof RESOURCE_ORIGINS)[number];
export const PROVIDER_RESOURCE_KINDS = Object.keys(
  PROVIDER_RESOURCE_SUBJECTS,
) as ProviderResourceKind[];

/**
 * Portico's own row of a resource a tenant made (or first saw) at a provider, for the capabilities that
 * keep no table of their own (card, marketplace, wallets, POS): whose it is (tenant isolation), what it
 * is (`kind`, declared by its capability), the provider's id once known, its status (with history in
 * status_changes), and the provider's last answer as the app saw it (a card object masked: a card number
 * or CVV never reaches this table). Written before the provider is called, so that a write whose outcome
 * is unknown is in doubt here (`creating`, `unknown`) until the resolver settles it.
 */
@Entity({ name: 'provider_resources' })
@Index(['tenantId', 'kind', 'createdAt'])
@Index(['tenantId', 'token'], { unique: true, where: 'token IS NOT NULL' })
// A provider id's row whoever's it is (`owned`: another tenant's is 404), and a row by its parent
// (an IRIS session's callback, a refund's or a void's original): every read by id, without a scan.
@Index(['token', 'kind'], { where: 'token IS NOT NULL' })
@Index(['kind', 'parentToken'], { where: 'parent_token IS NOT NULL' })
// The provider sync's look for pending rows that are due.
@Index(['kind', 'status', 'nextSyncAt'])
// A failed payment leaves its merchant_ref free (the provider made no payment), as the provider does.
@Index(['tenantId', 'merchantRef'], {
  unique: true,
  where: "kind = 'payment' AND status <> 'failed'",
})
export class ProviderResource {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 16 })
  kind: ProviderResourceKind;

  /** The provider's id (`pmt_…`, `ref_…`, `cus_…`, a POS transaction_id); null until it answered. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  token: string | null;

  /**
   * A refund's payment (`pmt_…`); an IRIS payment's source (`src_…`); an IRIS session's SHA-256 of the
   * unguessable reference its callback and webhook addresses carry (the reference itself is never
   * stored); a POS void's original transaction.
   */
  @Column({ name: 'parent_token', type: 'varchar', length: 64, nullable: true })
  parentToken: string | null;

  /** A payment's merchant_ref: the app's, or one Portico made; the provider's handle when in doubt. */
  @Column({ name: 'merchant_ref', type: 'varchar', length: 120, nullable: true })
  merchantRef: string | null;

  /**
   * Portico's `creating`, `unknown` (in doubt), `failed`; then the provider's status (`Captured`,
   * `Pre Authorized`, `Refunded`, …; `active` / `deleted` for a customer).
   */
  @Column({ type: 'varchar', length: 24 })
  status: string;

  @Column({ type: 'integer', nullable: true })
  amount: number | null;

  /** The provider's last answer about it (snake_case, as sent; a card object masked), or the capability's own record. */
  @Column({ type: 'jsonb', nullable: true })
  data: ProviderData | null;

  /**
   * Who made the row: `portico` (an app's call, or a read through the facade), or `provider` (found by
   * reconciliation at the provider, made outside Portico or never recorded).
   */
  @Column({ type: 'varchar', length: 12, default: 'portico' })
  origin: ResourceOrigin;

  /** Until when a resolver replica works this row (writes in doubt only). */
  @Column({ name: 'resolver_lease_until', type: 'timestamptz', nullable: true })
  resolverLeaseUntil: Date | null;

  /**
   * When the provider sync reads this pending row next (null: one interval after its creation); while a
   * replica reads it, the end of that replica's lease.
   */
  @Column({ name: 'next_sync_at', type: 'timestamptz', nullable: true })
  nextSyncAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
