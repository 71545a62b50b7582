import { type BankContext } from './bank-state.js';
import { type Consent } from './consent-model.js';
import { currentStatus } from './consent-operations.js';
import { fail } from './errors.js';
import { requireHeader } from './request-context.js';
import { type BankRequest } from './types.js';

const SERVICE_NAME: Readonly<Record<Consent['kind'], string>> = {
  ais: 'an account-information',
  cof: 'a confirmation-of-funds',
};

/**
 * The consent in the Consent-ID header, checked in psd2.yaml's order: missing 400, unknown
 * (or another TPP's / brand's) 403, wrong type 401 CONSENT_INVALID, expired 401
 * CONSENT_EXPIRED, otherwise not valid 401 CONSENT_INVALID.
 */
export function consentFromHeader<K extends Consent['kind']>(
  context: BankContext,
  request: BankRequest,
  kind: K,
): Extract<Consent, { kind: K }> {
  const consentId = requireHeader(request, 'consent-id', 'Consent-ID');
  const consent = context.state.consents.get(consentId);
  if (!consent || consent.brandId !== request.params.brandId || consent.tppId !== request.tppId) {
    fail(403, 'CONSENT_UNKNOWN', 'Consent-ID is not known', 'Consent-ID');
  }
  if (consent.kind !== kind)
    fail(401, 'CONSENT_INVALID', `Consent-ID is not ${SERVICE_NAME[kind]} consent`, 'Consent-ID');
  const status = currentStatus(context, consent);
  if (status === 'expired') fail(401, 'CONSENT_EXPIRED', 'Consent has expired', 'Consent-ID');
  if (status !== 'valid')
    fail(401, 'CONSENT_INVALID', `Consent is ${status}, not valid`, 'Consent-ID');
  return consent as Extract<Consent, { kind: K }>;
}
