/** Consent records and their lifecycle (psd2.yaml info "States"). */

export type ConsentStatus =
  | 'received'
  | 'rejected'
  | 'partiallyAuthorised'
  | 'valid'
  | 'revokedByPsu'
  | 'expired'
  | 'terminatedByTpp';

export interface AccountReference {
  iban: string;
}

/** psd2.yaml `AccountAccess`. */
export interface AccountAccess {
  accounts?: AccountReference[];
  balances?: AccountReference[];
  transactions?: AccountReference[];
}

interface ConsentBase {
  consentId: string;
  brandId: string;
  tppId: string;
  /** As stored; `expired` is derived from the clock on read, see effectiveStatus. */
  status: ConsentStatus;
  redirectUri: string;
  nokRedirectUri?: string;
  authorisationId: string;
  /** The PSU who authorised it, once authorised. */
  psuUsername?: string;
}

export interface AisConsent extends ConsentBase {
  kind: 'ais';
  access: AccountAccess;
  recurringIndicator: boolean;
  /** YYYY-MM-DD, last valid day (inclusive, UTC). */
  validUntil: string;
  /** Unattended reads allowed per UTC day. */
  frequencyPerDay: number;
}

export interface CofConsent extends ConsentBase {
  kind: 'cof';
  account: AccountReference;
}

export type Consent = AisConsent | CofConsent;

/** A `valid` AIS consent reads `expired` once the UTC day after `validUntil` has begun. */
export function effectiveStatus(consent: Consent, today: string): ConsentStatus {
  if (consent.kind === 'ais' && consent.status === 'valid' && today > consent.validUntil)
    return 'expired';
  return consent.status;
}

/** The PSU chose nothing to name: the bank offers the accounts and the PSU picks them at SCA. */
export function isBankOffered(access: AccountAccess): boolean {
  return [access.accounts, access.balances, access.transactions].every(
    (list) => list === undefined || list.length === 0,
  );
}

/** Every IBAN the consent names, in any list (an IBAN in balances or transactions also covers account details). */
export function coveredIbans(access: AccountAccess): string[] {
  return [
    ...new Set(
      [...(access.accounts ?? []), ...(access.balances ?? []), ...(access.transactions ?? [])].map(
        (reference) => reference.iban,
      ),
    ),
  ];
}

export function grants(
  access: AccountAccess,
  service: 'balances' | 'transactions',
  iban: string,
): boolean {
  return (access[service] ?? []).some((reference) => reference.iban === iban);
}
