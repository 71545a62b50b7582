import {
  applyDecorators,
  createParamDecorator,
  SetMetadata,
  UseGuards,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { RATE_LIMIT_IN_ROUTE_KEY } from '#src/access/auth/api-key.guard.js';
import {
  CONSENT_ACCESS_RULE,
  ConsentAccessGuard,
  type ConsentAccessRequest,
} from './consent-access.guard.js';
import { PSU_IP_ADDRESS } from './consent-headers.js';
import type { ConsentAccessGrant, ConsentAccessRule } from './consent-access.service.js';

/**
 * A route called under a consent (header Consent-ID): the guard checks the local rules and takes the
 * budget before the handler, and completes the access-log row and the budget headers after it.
 */
export function ConsentAccess(rule: ConsentAccessRule): MethodDecorator {
  const kind = rule.kind === 'ais' ? 'account-information' : 'confirmation-of-funds';
  return applyDecorators(
    SetMetadata(CONSENT_ACCESS_RULE, rule),
    // The consent-access guard counts the request in the statement that reads the consent.
    SetMetadata(RATE_LIMIT_IN_ROUTE_KEY, true),
    UseGuards(ConsentAccessGuard),
    ApiHeader({
      name: 'Consent-ID',
      required: true,
      description: `Portico's consentId of a valid ${kind} consent`,
      schema: { type: 'string', format: 'uuid', maxLength: 36 },
    }),
    ...(rule.kind === 'ais'
      ? [
          ApiHeader({
            name: 'PSU-IP-Address',
            required: false,
            description:
              "The user's IP address when the user is present; without it the read counts against the consent's daily budget",
            schema: { ...PSU_IP_ADDRESS.schema, example: '192.0.2.10' },
          }),
        ]
      : []),
  );
}

/** The consent the call was admitted under (by @ConsentAccess), with the user's IP when present. */
export const Granted = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ConsentAccessGrant => {
    const grant = context.switchToHttp().getRequest<ConsentAccessRequest>().consentAccess;
    if (!grant) throw new Error('@Granted() used on a route without @ConsentAccess()');
    return grant;
  },
);
