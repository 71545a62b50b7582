import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { applyRateLimit, type AuthenticatedRequest } from '#src/access/auth/api-key.guard.js';
import { RateLimitService } from '#src/access/auth/rate-limit.service.js';
import {
  budgetHeaders,
  ConsentAccessService,
  type ConsentAccessGrant,
  type ConsentAccessRule,
} from './consent-access.service.js';
import { completeRequestWith } from '#src/platform/errors/request-completion.js';
import { createValidationPipe } from '#src/platform/errors/validation.pipe.js';
import { readConsentHeaders, type ConsentHeaders } from './consent-headers.js';

export const CONSENT_ACCESS_RULE = 'portico:consent-access-rule';

export type ConsentAccessRequest = AuthenticatedRequest & {
  params?: Record<string, string>;
  body?: unknown;
  consentAccess?: ConsentAccessGrant;
};

/**
 * Admits a call under a consent (local rules, budget) before the handler; refusals are logged. The
 * route's rate limit is counted here, in the statement that reads the consent (RATE_LIMIT_IN_ROUTE_KEY).
 * What it admitted is completed however the request ends (RequestCompletion): answered, the access-log
 * row gets its outcome and the answer the budget headers; failed (a pipe, the handler, the bank), the
 * row gets the failure, the budget unit is given back when the bank certainly did not serve the read,
 * and the error may be restated (ConsentAccessService.failed).
 */
@Injectable()
export class ConsentAccessGuard implements CanActivate {
  private readonly paramsPipe = createValidationPipe();

  constructor(
    private readonly reflector: Reflector,
    private readonly access: ConsentAccessService,
    private readonly rateLimit: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<ConsentAccessRule>(CONSENT_ACCESS_RULE, context.getHandler());
    const request = context.switchToHttp().getRequest<ConsentAccessRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const keyId = request.principal!.keyId;
    let headers: ConsentHeaders;
    try {
      headers = readConsentHeaders(request.headers);
      if (rule.params)
        await this.paramsPipe.transform(request.params ?? {}, {
          type: 'param',
          metatype: rule.params,
        });
    } catch (error) {
      // Refused before the consent is read (nothing logged, nothing sent): it still counts against the key's minute.
      applyRateLimit(reply, await this.rateLimit.consume(keyId));
      throw error;
    }
    const iban = (request.body as { account?: { iban?: unknown } } | undefined)?.account?.iban;
    const grant = await this.access.admit(rule, {
      tenantId: request.principal!.tenantId,
      headers,
      rateLimit: { keyId, apply: (state) => applyRateLimit(reply, state) },
      accountId: request.params?.accountId,
      iban: rule.kind === 'cof' && typeof iban === 'string' ? iban : undefined,
    });
    request.consentAccess = grant;
    completeRequestWith(request, {
      answered: (addHeaders) => {
        const budget = this.access.completed(grant);
        if (budget) addHeaders(budgetHeaders(budget));
      },
      failed: (error) => this.access.failed(grant, error),
    });
    return true;
  }
}
