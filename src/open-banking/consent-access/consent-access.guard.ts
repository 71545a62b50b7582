import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthenticatedRequest } from '../../access/auth/api-key.guard.js';
import {
  ConsentAccessService,
  type ConsentAccessGrant,
  type ConsentAccessRule,
} from './consent-access.service.js';
import { readConsentHeaders } from './consent-headers.js';

export const CONSENT_ACCESS_RULE = 'portico:consent-access-rule';

export type ConsentAccessRequest = AuthenticatedRequest & {
  params?: Record<string, string>;
  body?: unknown;
  consentAccess?: ConsentAccessGrant;
};

/** Admits a call under a consent (local rules, budget) before the handler; refusals are logged. */
@Injectable()
export class ConsentAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: ConsentAccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<ConsentAccessRule>(CONSENT_ACCESS_RULE, context.getHandler());
    const request = context.switchToHttp().getRequest<ConsentAccessRequest>();
    const iban = (request.body as { account?: { iban?: unknown } } | undefined)?.account?.iban;
    request.consentAccess = await this.access.admit(rule, {
      tenantId: request.principal!.tenantId,
      headers: readConsentHeaders(request.headers),
      accountId: request.params?.accountId,
      iban: rule.kind === 'cof' && typeof iban === 'string' ? iban : undefined,
    });
    return true;
  }
}
