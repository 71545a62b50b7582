import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import { isUuid } from '#src/shared/uuid.js';
import { PSD2 } from '#src/upstreams/open-banking/psd2-schemas.js';

/** The bank's bounds for PSU-IP-Address (Node's isIP alone takes an IPv6 zone of any length). */
export const PSU_IP_ADDRESS = PSD2.parameter('PSUIPAddress');

export interface ConsentHeaders {
  consentId: string;
  /** Present when the user is present (attended access); absent reads count against the daily budget. */
  psuIpAddress?: string;
}

/** `Consent-ID` (Portico's consent id, required) and `PSU-IP-Address` (optional), validated. */
export function readConsentHeaders(headers: FastifyRequest['headers']): ConsentHeaders {
  const consentId = headers['consent-id'];
  const psuIpAddress = headers['psu-ip-address'];
  const problems = [];
  if (typeof consentId !== 'string' || consentId === '')
    problems.push({
      field: 'header:Consent-ID',
      reason: 'Consent-ID is required: the consentId Portico returned',
    });
  else if (!isUuid(consentId))
    problems.push({
      field: 'header:Consent-ID',
      reason: 'Consent-ID must be a consent id (UUID) from Portico',
    });
  if (
    psuIpAddress !== undefined &&
    (typeof psuIpAddress !== 'string' ||
      isIP(psuIpAddress) === 0 ||
      PSU_IP_ADDRESS.problems(psuIpAddress).length > 0)
  ) {
    problems.push({
      field: 'header:PSU-IP-Address',
      reason: "PSU-IP-Address must be the user's IPv4 or IPv6 address",
    });
  }
  if (problems.length) throw new ValidationFailedException(problems, 'request headers');
  return { consentId: consentId as string, psuIpAddress: psuIpAddress as string | undefined };
}
