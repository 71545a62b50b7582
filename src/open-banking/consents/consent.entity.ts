import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { components } from '#src/generated/psd2.js';
import { ScaSubjectColumns } from '../sca-sessions/sca-subject.columns.js';

export const CONSENT_KINDS = ['ais', 'cof'] as const;
export type ConsentKind = (typeof CONSENT_KINDS)[number];

/**
 * Portico's own states besides the bank's consentStatus: `creating` (row written, bank not yet
 * answered), `unknown` (the creation may have reached the bank but its answer was lost: settled by the
 * resolver), `failed` (the bank certainly has no such consent) and `forgottenByBank` (the bank no
 * longer knows a consent it had: final, the consent must be renewed).
 */
export const CONSENT_STATUSES = [
  'creating',
  'unknown',
  'failed',
  'forgottenByBank',
  'received',
  'rejected',
  'partiallyAuthorised',
  'valid',
  'revokedByPsu',
  'expired',
  'terminatedByTpp',
] as const;
export type ConsentStatus = (typeof CONSENT_STATUSES)[number];

/** The statuses a consent never leaves. */
export const FINAL_CONSENT_STATUSES: readonly ConsentStatus[] = [
  'failed',
  'forgottenByBank',
  'rejected',
  'revokedByPsu',
  'expired',
  'terminatedByTpp',
];

type Schemas = components['schemas'];

/** What a consent covers, as asked and as the bank granted it: AccountAccess (ais), or one account (cof). */
export type ConsentAccess = Schemas['AccountAccess'] | Schemas['CofConsentRequest'];

export interface ConsentAccount {
  /** The bank's opaque account id (resourceId); what the app passes as accountId. */
  resourceId: string;
  iban: string;
  currency: string;
}

/** One consent given by a PSU to a tenant's app through Portico: account information (ais) or confirmation of funds (cof). */
@Entity({ name: 'consents' })
@Index(['tenantId', 'createdAt'])
export class Consent extends ScaSubjectColumns {
  /** Until when a resolver replica works this row (writes in doubt only). */
  @Column({ name: 'resolver_lease_until', type: 'timestamptz', nullable: true })
  resolverLeaseUntil: Date | null;

  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 3 })
  kind: ConsentKind;

  @Column({ name: 'brand_id', type: 'varchar', length: 128 })
  brandId: string;

  @Column({ name: 'upstream_consent_id', type: 'varchar', length: 128, nullable: true })
  upstreamConsentId: string | null;

  /** What the app asked for: AccountAccess (ais) or the account (cof), as sent upstream. */
  @Column({ name: 'requested_access', type: 'jsonb' })
  requestedAccess: ConsentAccess;

  /** What the bank granted, as it reports it after SCA. */
  @Column({ name: 'granted_access', type: 'jsonb', nullable: true })
  grantedAccess: ConsentAccess | null;

  @Column({ type: 'jsonb', default: [] })
  accounts: ConsentAccount[];

  @Column({ name: 'recurring_indicator', type: 'boolean', nullable: true })
  recurringIndicator: boolean | null;

  /** As the bank returned it (inclusive, UTC). */
  @Column({ name: 'valid_until', type: 'date', nullable: true })
  validUntil: string | null;

  @Column({ name: 'frequency_per_day', type: 'integer', nullable: true })
  frequencyPerDay: number | null;

  /** The account-information consent this one renews (terminated once this one is valid). */
  @Column({ name: 'renews_consent_id', type: 'uuid', nullable: true })
  renewsConsentId: string | null;

  @Column({ type: 'varchar', length: 24 })
  status: ConsentStatus;
}

/** Berlin Group's default when the consent names no frequencyPerDay. */
export const DEFAULT_FREQUENCY_PER_DAY = 4;

/** The unattended reads a day an account-information consent allows (null for other kinds). */
export function appliedFrequencyPerDay(consent: Pick<Consent, 'kind' | 'frequencyPerDay'>) {
  return consent.kind === 'ais' ? (consent.frequencyPerDay ?? DEFAULT_FREQUENCY_PER_DAY) : null;
}

/** RTS Art. 10a: unattended account information needs a fresh SCA every 180 days. */
export const SCA_RENEWAL_DAYS = 180;

/** When an account-information consent needs the user's SCA again; null before the first. */
export function scaRenewalDueAt(consent: Pick<Consent, 'kind' | 'lastScaAt'>): Date | null {
  if (consent.kind !== 'ais' || !consent.lastScaAt) return null;
  return new Date(consent.lastScaAt.getTime() + SCA_RENEWAL_DAYS * 86_400_000);
}
