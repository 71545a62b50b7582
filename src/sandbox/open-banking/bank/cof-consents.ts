import { randomUUID } from 'node:crypto';
import { type BankContext } from './bank-state.js';
import { type AccountReference, type CofConsent } from './consent-model.js';
import {
  consentCreated,
  consentStatusResponse,
  currentStatus,
  ownedConsent,
  terminateConsent,
} from './consent-operations.js';
import { openAuthorisation, redirectUris, requireBrand } from './request-context.js';
import { type BankRequest, type BankResponse } from './types.js';

/** Confirmation-of-funds consents (v2): one account, no expiry date. */

function consentPath(brandId: string, consentId: string): string {
  return `/${brandId}/bg/v2/consents/confirmation-of-funds/${consentId}`;
}

export function createCofConsent(context: BankContext, request: BankRequest): BankResponse {
  const brand = requireBrand(request);
  const uris = redirectUris(request);
  const body = request.body as { account: AccountReference };
  const consentId = `cof-${randomUUID()}`;
  const { authorisationId, scaRedirect } = openAuthorisation(context, brand.brandId, {
    kind: 'consent',
    consentId,
  });
  const consent: CofConsent = {
    kind: 'cof',
    consentId,
    brandId: brand.brandId,
    tppId: request.tppId,
    status: 'received',
    ...uris,
    authorisationId,
    account: { iban: body.account.iban },
  };
  return consentCreated(context, consent, consentPath(brand.brandId, consentId), scaRedirect);
}

export function getCofConsent(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  const consent = ownedConsent(context, request, 'cof');
  return {
    status: 200,
    body: {
      account: { iban: consent.account.iban },
      consentStatus: currentStatus(context, consent),
    },
  };
}

export function getCofConsentStatus(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  return consentStatusResponse(context, ownedConsent(context, request, 'cof'));
}

export function deleteCofConsent(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  return terminateConsent(context, ownedConsent(context, request, 'cof'));
}
