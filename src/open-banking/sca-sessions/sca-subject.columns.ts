import { Column, CreateDateColumn, UpdateDateColumn } from 'typeorm';

export const SCA_APPROACHES = ['REDIRECT', 'EMBEDDED', 'DECOUPLED'] as const;
export type ScaApproach = (typeof SCA_APPROACHES)[number];

/** The bank's ASPSP-SCA-Approach header of a creation answer, when it is one of Berlin Group's values. */
export function scaApproachOf(headers: Record<string, string>): ScaApproach | null {
  const value = headers['aspsp-sca-approach'];
  return (SCA_APPROACHES as readonly string[]).includes(value) ? (value as ScaApproach) : null;
}

/** What consents and payments share: where the user goes at the bank and comes back to, and when. */
export abstract class ScaSubjectColumns {
  @Column({ name: 'redirect_uri', type: 'varchar', length: 2000 })
  redirectUri: string;

  @Column({ name: 'nok_redirect_uri', type: 'varchar', length: 2000, nullable: true })
  nokRedirectUri: string | null;

  /** The app's own reference for the user, kept for audit and never sent to the bank. */
  @Column({ name: 'psu_reference', type: 'varchar', length: 200, nullable: true })
  psuReference: string | null;

  /** The bank's SCA page (scaRedirect). */
  @Column({ name: 'sca_redirect', type: 'varchar', length: 2000, nullable: true })
  scaRedirect: string | null;

  /** How the bank has the user authorise (its ASPSP-SCA-Approach header): REDIRECT, EMBEDDED, DECOUPLED. */
  @Column({ name: 'sca_approach', type: 'varchar', length: 16, nullable: true })
  scaApproach: ScaApproach | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** When the user last came back from the bank. */
  @Column({ name: 'last_sca_at', type: 'timestamptz', nullable: true })
  lastScaAt: Date | null;
}

/** The shared fields of a new consent or payment, from the app's request. */
export function newScaSubject(request: {
  redirectUri: string;
  nokRedirectUri?: string;
  psuReference?: string;
}) {
  return {
    redirectUri: request.redirectUri,
    nokRedirectUri: request.nokRedirectUri ?? null,
    psuReference: request.psuReference ?? null,
    scaRedirect: null,
    scaApproach: null,
    lastScaAt: null,
  };
}
