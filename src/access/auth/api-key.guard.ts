import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { completeRequestWith } from '#src/platform/errors/request-completion.js';
import { IDEMPOTENCY_KEY_HEADER } from '#src/platform/idempotency/idempotency-problems.js';
import { COUNTED_BY_FIRST_WRITE_KEY } from '#src/platform/idempotency/idempotent.decorator.js';
import { requestContext, type RequestContext } from '#src/platform/logging/request-context.js';
import type { ApiKeyRole } from '../tenants/api-key.entity.js';
import { TenantsService, type Principal } from '../tenants/tenants.service.js';
import { RATE_LIMIT_HEADERS } from '#src/platform/openapi/api-conventions.js';
import { RateLimitService, type RateLimitState } from './rate-limit.service.js';

export const ROLES_KEY = 'portico:roles';
/** Set by @OptionalAuth(): a request without Authorization passes, with no principal. */
export const OPTIONAL_AUTH_KEY = 'portico:optional-auth';

/**
 * Set on a route whose own guard counts the request against the key's rate limit in the statement
 * it sends anyway (the consent-access admission), saving a round-trip; that guard must then call
 * applyRateLimit before anything else happens.
 */
export const RATE_LIMIT_IN_ROUTE_KEY = 'portico:rate-limit-in-route';

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="portico"' };

/** Checks `Authorization: Bearer <key>` and the key's role against the route's roles. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tenants: TenantsService,
    private readonly rateLimit: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const roles =
      this.reflector.getAllAndOverride<ApiKeyRole[]>(ROLES_KEY, [
        context.getHandler(),
        context.getClass(),
      ]) ?? [];
    const header = request.headers.authorization;
    if (
      header === undefined &&
      this.reflector.get<boolean>(OPTIONAL_AUTH_KEY, context.getHandler())
    )
      return true;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new ProblemException({
        status: 401,
        type: PROBLEM_TYPES.unauthenticated,
        title: 'Unauthorized',
        detail: header
          ? 'The Authorization header must be "Bearer <API key>"'
          : 'An API key is required: send "Authorization: Bearer <API key>"',
        headers: CHALLENGE,
      });
    }
    const known = this.tenants.authenticate(match[1]);
    const principal = known instanceof Promise ? await known : known;
    if (!principal) {
      throw new ProblemException({
        status: 401,
        type: PROBLEM_TYPES.unauthenticated,
        title: 'Unauthorized',
        detail: 'The API key is unknown or revoked',
        headers: { 'WWW-Authenticate': 'Bearer realm="portico", error="invalid_token"' },
      });
    }
    request.principal = principal;
    const store = requestContext.getStore();
    if (store) store.tenantId = principal.tenantId;

    const reply = context.switchToHttp().getResponse<FastifyReply>();
    if (this.reflector.get<boolean>(RATE_LIMIT_IN_ROUTE_KEY, context.getHandler())) {
      // Counted by the route's own guard.
    } else if (
      store &&
      request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] === undefined &&
      this.reflector.get<boolean>(COUNTED_BY_FIRST_WRITE_KEY, context.getHandler())
    )
      this.countByFirstWrite(request, reply, principal.keyId, store);
    else applyRateLimit(reply, await this.rateLimit.consume(principal.keyId));
    if (roles.length > 0 && !roles.includes(principal.role)) {
      // Over its limit, the request is answered 429 whatever else is wrong with it.
      await store?.admission;
      throw new ProblemException({
        status: 403,
        type: PROBLEM_TYPES.forbidden,
        title: 'Forbidden',
        detail: `This operation needs a key with role ${roles.join(' or ')}; this key has role ${principal.role}`,
      });
    }
    return true;
  }

  /**
   * A creating call without an Idempotency-Key: its count is sent now and the request goes on while it
   * is in flight (its body read and checked against the contract), so that the count's round-trip
   * overlaps that work instead of preceding it. Its first write awaits the count (admittedToWrite: the
   * ledger's begin, a call written ahead), so that nothing is written, nor sent to a provider, for a
   * request over its limit; a request that fails before writing is answered 429 when over its limit
   * (RequestCompletion), as if counted first. With a key, the claim is the first write and the count
   * goes first, as on every other route.
   */
  private countByFirstWrite(
    request: AuthenticatedRequest,
    reply: FastifyReply,
    keyId: string,
    store: RequestContext,
  ): void {
    const admission = this.rateLimit.consume(keyId).then((usage) => {
      if (!reply.sent) applyRateLimit(reply, usage);
    });
    // Awaited by the first write or by the completion; never left unhandled.
    admission.catch(() => undefined);
    store.admission = admission;
    completeRequestWith(request, {
      answered: () => undefined,
      failed: (error) =>
        admission.then(
          () => error,
          (refusal: unknown) => refusal,
        ),
    });
  }
}

/** The rate-limit headers of the answer, and 429 when the key used up its minute. */
export function applyRateLimit(reply: FastifyReply, usage: RateLimitState): void {
  const rateHeaders = {
    [RATE_LIMIT_HEADERS.limit]: String(usage.limit),
    [RATE_LIMIT_HEADERS.remaining]: String(usage.remaining),
    [RATE_LIMIT_HEADERS.reset]: String(usage.resetSeconds),
  };
  reply.headers(rateHeaders);
  if (usage.exceeded) {
    throw new ProblemException({
      status: 429,
      type: PROBLEM_TYPES.rateLimited,
      title: 'Too Many Requests',
      detail: `This API key may make ${usage.limit} requests a minute; try again in ${usage.resetSeconds} s`,
      headers: { ...rateHeaders, 'Retry-After': String(usage.resetSeconds) },
    });
  }
}
