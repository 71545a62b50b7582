import { createdHeaders, href } from './request-context.js';
import { type BankContext } from './bank-state.js';
import { effectiveStatus, type Consent, type ConsentStatus } from './consent-model.js';
import { utcDay } from './dates.js';
import { fail } from './errors.js';
import { type BankRequest, type BankResponse } from './types.js';

/** Lifecycle operations shared by AIS (v1) and confirmation-of-funds (v2) consents. */

/** The consent named by the path, if it is of this kind, brand and TPP; anything else is 403 CONSENT_UNKNOWN. */
export function ownedConsent<K extends Consent['kind']>(
  context: BankContext,
  request: BankRequest,
  kind: K,
): Extract<Consent, { kind: K }> {
  const consent = context.state.consents.get(request.params.consentId ?? '');
  if (
    !consent ||
    consent.kind !== kind ||
    consent.brandId !== request.params.brandId ||
    consent.tppId !== request.tppId
  ) {
    fail(403, 'CONSENT_UNKNOWN', 'Consent is not known', 'consentId');
  }
  return consent as Extract<Consent, { kind: K }>;
}

export function currentStatus(context: BankContext, consent: Consent) {
  return effectiveStatus(consent, utcDay(context.now()));
}

export function consentStatusResponse(context: BankContext, consent: Consent): BankResponse {
  return { status: 200, body: { consentStatus: currentStatus(context, consent) } };
}

/**
 * DELETE: terminatedByTpp from any non-final status; repeating it is harmless (200 again);
 * other final statuses are 409 STATUS_INVALID, as psd2.yaml's deleteConsent says.
 */
export function terminateConsent(context: BankContext, consent: Consent): BankResponse {
  const status = currentStatus(context, consent);
  if (status === 'rejected' || status === 'revokedByPsu' || status === 'expired') {
    fail(409, 'STATUS_INVALID', `Consent is already ${status}`);
  }
  consent.status = 'terminatedByTpp';
  // A pending authorisation must not revive a terminated consent.
  const authorisation = context.state.authorisations.get(consent.authorisationId);
  if (authorisation) authorisation.finished = true;
  return { status: 200 };
}

/** control.revokeConsentAsPsu: only a consent that is valid right now can be revoked. */
export function revokeAsPsu(context: BankContext, consentId: string): boolean {
  const consent = context.state.consents.get(consentId);
  if (!consent || currentStatus(context, consent) !== 'valid') return false;
  consent.status = 'revokedByPsu';
  return true;
}

/**
 * control.actOnConsent: the bank changes a consent outside the TPP (its back office rejects or ends it,
 * or loses it: `forget`). False when the consent is unknown.
 */
export function actOnConsent(
  context: BankContext,
  consentId: string,
  change: { status: ConsentStatus } | 'forget',
): boolean {
  const consent = context.state.consents.get(consentId);
  if (!consent) return false;
  if (change === 'forget') return context.state.consents.delete(consentId);
  consent.status = change.status;
  return true;
}

/** Stores a new consent and answers its creation (201 ConsentResponse with the SCA link). */
export function consentCreated(
  context: BankContext,
  consent: Consent,
  selfPath: string,
  scaRedirect: string,
): BankResponse {
  context.state.consents.set(consent.consentId, consent);
  return {
    status: 201,
    headers: createdHeaders(selfPath),
    body: {
      consentId: consent.consentId,
      consentStatus: 'received',
      _links: {
        scaRedirect: href(scaRedirect),
        self: href(selfPath),
        status: href(`${selfPath}/status`),
      },
    },
  };
}
