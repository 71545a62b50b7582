import { Column, CreateDateColumn, UpdateDateColumn } from 'typeorm';

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
    lastScaAt: null,
  };
}
