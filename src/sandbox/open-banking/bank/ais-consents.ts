import { randomUUID } from 'node:crypto';
import { type BankContext } from './bank-state.js';
import { type AccountAccess, type AisConsent } from './consent-model.js';
import {
  consentCreated,
  consentStatusResponse,
  currentStatus,
  ownedConsent,
  terminateConsent,
} from './consent-operations.js';
import { utcDay } from './dates.js';
import { fail } from './errors.js';
import { href, openAuthorisation, redirectUris, requireBrand } from './request-context.js';
import { type BankRequest, type BankResponse } from './types.js';

/** Berlin Group's default when the TPP names no frequency. */
export const DEFAULT_FREQUENCY_PER_DAY = 4;

/** psd2.yaml `ConsentRequest`, already schema-validated. */
interface ConsentRequestBody {
  access: AccountAccess;
  recurringIndicator: boolean;
  validUntil: string;
  frequencyPerDay?: number;
}

function consentPath(brandId: string, consentId: string): string {
  return `/${brandId}/bg/v1/consents/${consentId}`;
}

export function createConsent(context: BankContext, request: BankRequest): BankResponse {
  const brand = requireBrand(request);
  const uris = redirectUris(request);
  const body = request.body as ConsentRequestBody;
  if (body.validUntil < utcDay(context.now()))
    fail(400, 'PERIOD_INVALID', 'validUntil lies in the past', 'validUntil');
  const consentId = `ais-${randomUUID()}`;
  const { authorisationId, scaRedirect } = openAuthorisation(context, brand.brandId, {
    kind: 'consent',
    consentId,
  });
  const consent: AisConsent = {
    kind: 'ais',
    consentId,
    brandId: brand.brandId,
    tppId: request.tppId,
    status: 'received',
    ...uris,
    authorisationId,
    access: structuredClone(body.access),
    recurringIndicator: body.recurringIndicator,
    validUntil: body.validUntil,
    frequencyPerDay: body.frequencyPerDay ?? DEFAULT_FREQUENCY_PER_DAY,
  };
  return consentCreated(context, consent, consentPath(brand.brandId, consentId), scaRedirect);
}

export function getConsent(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  const consent = ownedConsent(context, request, 'ais');
  const self = consentPath(consent.brandId, consent.consentId);
  return {
    status: 200,
    body: {
      access: structuredClone(consent.access),
      recurringIndicator: consent.recurringIndicator,
      validUntil: consent.validUntil,
      consentStatus: currentStatus(context, consent),
      _links: { self: href(self), status: href(`${self}/status`) },
    },
  };
}

export function getConsentStatus(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  return consentStatusResponse(context, ownedConsent(context, request, 'ais'));
}

export function deleteConsent(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  return terminateConsent(context, ownedConsent(context, request, 'ais'));
}
