import { statusTitle } from './problem.js';

/**
 * The one title of every problem type Portico answers, whatever the route: the answer's `title` is read
 * here by its `type` (RFC 9457: a title is the type's, not the occurrence's; the occurrence is `detail`).
 * `about:blank` takes the status's own phrase, as the RFC says.
 */
export const PROBLEM_TITLES: Readonly<Record<string, string>> = {
  'urn:portico:problem:validation-failed': 'Validation failed',
  'urn:portico:problem:unauthenticated': 'Unauthorized',
  'urn:portico:problem:forbidden': 'Forbidden',
  'urn:portico:problem:not-found': 'Not Found',
  'urn:portico:problem:conflict': 'Conflict',
  'urn:portico:problem:rate-limited': 'Too Many Requests',
  'urn:portico:problem:malformed-body': 'Malformed request body',
  'urn:portico:problem:malformed-request': 'Bad Request',
  'urn:portico:problem:body-too-large': 'Payload Too Large',
  'urn:portico:problem:uri-too-long': 'URI Too Long',
  'urn:portico:problem:unsupported-media-type': 'Unsupported Media Type',
  'urn:portico:problem:unavailable': 'Service Unavailable',
  'urn:portico:problem:internal-error': 'Internal Server Error',
  'urn:portico:problem:idempotency-in-progress': 'Request in progress',
  'urn:portico:problem:idempotency-key-reused': 'Idempotency key reused',
  'urn:portico:problem:idempotency-unavailable': 'Service Unavailable',
  'urn:portico:problem:outcome-unknown': 'Outcome unknown',
  'urn:portico:problem:not-made': 'Not made by the provider',
  'urn:portico:problem:upstream-refused': 'Refused by the provider',
  'urn:portico:problem:upstream-failed': 'Bad Gateway',
  'urn:portico:problem:upstream-timeout': 'Gateway Timeout',
  'urn:portico:problem:upstream-unavailable': 'Service Unavailable',
  'urn:portico:problem:sca-state-gone': 'Gone',
  'urn:portico:problem:consent:renewal-required': 'Consent must be renewed',
  'urn:portico:problem:consent:access-exceeded': 'ACCESS_EXCEEDED',
  'urn:portico:problem:card-credentials-missing': 'Card merchant keys missing',
  'urn:portico:problem:card-credentials-unreadable': 'Card merchant keys unreadable',
  'urn:portico:problem:card-fields-not-allowed': 'Card fields not allowed',
  'urn:portico:problem:pos-key-missing': 'POS key missing',
  'urn:portico:problem:refund-failed': 'Refund failed',
  'urn:portico:problem:iris-session-expired': 'IRIS session expired',
  'urn:portico:problem:wallet-token-used': 'Wallet card token already used',
  'urn:portico:problem:wallet-token-not-verified': 'Wallet card token not verified',
  'urn:portico:problem:webhooks:no-endpoint': 'No endpoint subscribed',
};

/** A Berlin Group refusal of a consent (`urn:portico:problem:consent:consent-invalid`) is titled by its code. */
const CONSENT_CODE = /^urn:portico:problem:consent:([a-z-]+)$/;

/** The title of a problem type; `fallback` only for a type the registry does not know. */
export function problemTitle(type: string, status: number, fallback?: string): string {
  if (type === 'about:blank') return statusTitle(status);
  const known = PROBLEM_TITLES[type];
  if (known) return known;
  const consent = CONSENT_CODE.exec(type);
  if (consent) return consent[1].toUpperCase().replace(/-/g, '_');
  return fallback ?? statusTitle(status);
}
