import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from '#src/platform/errors/problem.js';
import type { ApiKeyRole } from '../tenants/api-key.entity.js';
import { API_KEY_SCHEME } from '#src/platform/openapi/api-conventions.js';
import type { Principal } from '../tenants/tenants.service.js';
import {
  ApiKeyGuard,
  OPTIONAL_AUTH_KEY,
  ROLES_KEY,
  type AuthenticatedRequest,
} from './api-key.guard.js';

const problemContent = {
  [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } },
};

/** Requires an API key with one of the roles, and documents exactly that: guard and spec cannot diverge. */
export function Auth(...roles: ApiKeyRole[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ROLES_KEY, roles),
    UseGuards(ApiKeyGuard),
    ApiBearerAuth(API_KEY_SCHEME),
    ApiUnauthorizedResponse({
      description: 'No API key, or an unknown or revoked one',
      content: problemContent,
    }),
    ApiForbiddenResponse({
      description: `The key's role is not ${roles.length ? roles.join(' or ') : 'allowed'}`,
      content: problemContent,
    }),
    ApiTooManyRequestsResponse({
      description: 'The key used up its requests for this minute (see Retry-After)',
      content: problemContent,
    }),
  );
}

/**
 * An API key is optional: without one the handler runs with no principal (see OptionalPrincipal); a key that
 * is sent must be valid (401 otherwise) and counts against its rate limit. Any role.
 */
export function OptionalAuth(): MethodDecorator {
  return applyDecorators(
    SetMetadata(OPTIONAL_AUTH_KEY, true),
    UseGuards(ApiKeyGuard),
    ApiSecurity(API_KEY_SCHEME),
    ApiSecurity({}),
    ApiUnauthorizedResponse({
      description: 'An unknown or revoked API key was sent',
      content: problemContent,
    }),
    ApiTooManyRequestsResponse({
      description: 'The key used up its requests for this minute (see Retry-After)',
      content: problemContent,
    }),
  );
}

/** The caller of an @OptionalAuth() route, or undefined when it sent no key. */
export const OptionalPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal | undefined =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().principal,
);

/** The authenticated caller (tenant, key and role). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (!principal) throw new Error('CurrentPrincipal used on a route without @Auth()');
    return principal;
  },
);
