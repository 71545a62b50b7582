import { randomUUID } from 'node:crypto';
import { type BankContext } from './bank-state.js';
import { authorizationEndpoint, findBrand, type Brand } from './brands.js';
import { fail } from './errors.js';
import { type Authorisation } from './authorisation-model.js';
import { type BankRequest } from './types.js';

/** Checks shared by the operations: brand, mandatory headers, authorisation links. */

export function requireBrand(request: BankRequest): Brand {
  const brand = findBrand(request.params.brandId ?? '');
  if (!brand) fail(404, 'RESOURCE_UNKNOWN', 'Unknown brandId', 'brandId');
  return brand;
}

export function requireHeader(request: BankRequest, name: string, displayName: string): string {
  const value = request.headers[name];
  if (value === undefined || value === '')
    fail(400, 'FORMAT_ERROR', `Header ${displayName} is missing`, displayName);
  return value;
}

export interface RedirectUris {
  redirectUri: string;
  nokRedirectUri?: string;
}

export function redirectUris(request: BankRequest): RedirectUris {
  const redirectUri = requireHeader(request, 'tpp-redirect-uri', 'TPP-Redirect-URI');
  const nokRedirectUri = request.headers['tpp-nok-redirect-uri'];
  return nokRedirectUri ? { redirectUri, nokRedirectUri } : { redirectUri };
}

/** Opens the single authorisation of a new consent or payment and returns its scaRedirect URL. */
export function openAuthorisation(
  context: BankContext,
  brandId: string,
  target: Authorisation['target'],
): { authorisationId: string; scaRedirect: string } {
  const authorisationId = randomUUID();
  context.state.authorisations.set(authorisationId, {
    authorisationId,
    brandId,
    target,
    finished: false,
  });
  return {
    authorisationId,
    scaRedirect: `${authorizationEndpoint(context.scaBaseUrl, brandId)}/authorisations/${authorisationId}`,
  };
}

/** Headers of every 201: where the new resource lives, and how its PSU authorises it (only by redirect here). */
export function createdHeaders(selfPath: string): Record<string, string> {
  return { Location: selfPath, 'ASPSP-SCA-Approach': 'REDIRECT' };
}

export function href(value: string): { href: string } {
  return { href: value };
}
