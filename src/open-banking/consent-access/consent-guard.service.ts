import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ProblemException } from '../../platform/errors/problem.js';
import { AccessLogService } from '../../audit/trail/access-log.service.js';
import type { Consent, ConsentKind } from '../consents/consent.entity.js';
import { ConsentsService, consentProblem } from '../consents/consents.service.js';
import { UpstreamCaller, type UpstreamAnswer } from '../../upstreams/http/upstream-caller.js';
import { BudgetService, DEFAULT_FREQUENCY_PER_DAY, type Budget } from './budget.service.js';
import type { ConsentHeaders } from './consent-headers.js';

export const BUDGET_HEADERS = {
  limit: 'X-Access-Budget-Limit',
  remaining: 'X-Access-Budget-Remaining',
  reset: 'X-Access-Budget-Reset',
} as const;

export interface ConsentCall {
  tenantId: string;
  headers: ConsentHeaders;
  /** The facade operation, for the access log. */
  operation: string;
  kind: ConsentKind;
  /** The account asked for, and the access the read needs on it. */
  account?: { resourceId: string; need: 'accounts' | 'balances' | 'transactions' };
  /** An IBAN the call names directly (funds confirmation): it must be the consent's. */
  iban?: string;
}

type Granted = Partial<Record<'accounts' | 'balances' | 'transactions', { iban: string }[]>>;

/**
 * Every call under a consent goes through here: the local rules are checked before the bank is called
 * (tenant, consent kind and status, validUntil, the account, the daily budget), and the call is written
 * to the access log whatever its outcome.
 */
@Injectable()
export class ConsentGuardService {
  constructor(
    private readonly consents: ConsentsService,
    private readonly budgets: BudgetService,
    private readonly accessLog: AccessLogService,
    private readonly upstream: UpstreamCaller,
  ) {}

  async run<T>(
    call: ConsentCall,
    reply: FastifyReply,
    send: (consent: Consent) => Promise<UpstreamAnswer<T>>,
  ): Promise<T> {
    const started = performance.now();
    const attended = call.headers.psuIpAddress !== undefined;
    const log = (consentId: string | null, upstreamStatus: number | null, outcome: string) =>
      this.accessLog.record({
        tenantId: call.tenantId,
        consentId,
        operation: call.operation,
        accountId: call.account?.resourceId ?? null,
        psuPresent: attended,
        upstreamStatus,
        outcome,
        latencyMs: Math.round(performance.now() - started),
      });

    let consent: Consent;
    try {
      consent = await this.consents.find(call.tenantId, call.headers.consentId);
    } catch (error) {
      await log(null, null, 'refused:CONSENT_UNKNOWN');
      throw error;
    }
    let budget: Budget | undefined;
    const limit = consent.frequencyPerDay ?? DEFAULT_FREQUENCY_PER_DAY;
    try {
      this.checkConsent(consent, call);
      await this.consents.expireIfDue(consent);
      if (consent.status === 'expired')
        throw consentProblem(
          401,
          'CONSENT_EXPIRED',
          `The consent expired after ${consent.validUntil}`,
        );
      if (consent.status !== 'valid')
        throw consentProblem(401, 'CONSENT_INVALID', `The consent is ${consent.status}, not valid`);
      this.checkAccount(consent, call);
      if (call.kind === 'ais' && !attended) {
        budget = await this.budgets.take(consent.id, limit);
        if (!budget) {
          const current = await this.budgets.current(consent.id, limit);
          this.setBudgetHeaders(reply, current);
          throw new ProblemException({
            status: 429,
            type: 'urn:portico:problem:consent:access-exceeded',
            title: 'ACCESS_EXCEEDED',
            detail: `The consent allows ${limit} reads a day without the user present; send PSU-IP-Address when the user is present`,
            headers: { 'Retry-After': String(current.resetSeconds) },
            extensions: { code: 'ACCESS_EXCEEDED' },
          });
        }
      }
    } catch (error) {
      const code = (error as ProblemException).init?.extensions?.code ?? 'INVALID';
      await log(consent.id, null, `refused:${String(code)}`);
      throw error;
    }

    let answer: UpstreamAnswer<T>;
    try {
      answer = await send(consent);
    } catch (error) {
      // No answer (timeout, broken connection): the bank may have served and counted the read, so the unit stays taken.
      await log(consent.id, null, `failed:${(error as ProblemException).init?.status ?? 'error'}`);
      throw error;
    }
    if (answer.status >= 400) {
      // The bank counts successful reads only: a refused read gives its unit back.
      if (budget) await this.budgets.giveBack(consent.id);
      await log(consent.id, answer.status, `upstream:${answer.messages[0]?.code ?? answer.status}`);
      // The bank knows something Portico does not (revoked at the bank, say): bring the status up to date.
      if (answer.messages.some((m) => m.code.startsWith('CONSENT_')))
        await this.consents.refresh(consent).catch(() => undefined);
      throw this.upstream.refusal(call.operation, answer);
    }
    await log(consent.id, answer.status, 'ok');
    if (call.kind === 'ais')
      this.setBudgetHeaders(reply, budget ?? (await this.budgets.current(consent.id, limit)));
    return answer.data as T;
  }

  private checkConsent(consent: Consent, call: ConsentCall): void {
    if (consent.kind !== call.kind) {
      const expected = call.kind === 'ais' ? 'an account-information' : 'a confirmation-of-funds';
      throw consentProblem(401, 'CONSENT_INVALID', `This operation needs ${expected} consent`);
    }
  }

  private checkAccount(consent: Consent, call: ConsentCall): void {
    if (call.iban !== undefined) {
      const account = (consent.grantedAccess?.account ?? consent.requestedAccess.account) as
        { iban?: string } | undefined;
      if (account?.iban !== call.iban)
        throw consentProblem(
          403,
          'RESOURCE_UNKNOWN',
          'The account is not the one this consent covers',
        );
    }
    if (!call.account) return;
    const account = consent.accounts.find((a) => a.resourceId === call.account?.resourceId);
    if (!account)
      throw consentProblem(
        403,
        'RESOURCE_UNKNOWN',
        `The consent does not cover account ${call.account.resourceId}`,
      );
    if (call.account.need === 'accounts') return;
    const granted = (consent.grantedAccess ?? consent.requestedAccess) as Granted;
    if (!(granted[call.account.need] ?? []).some((entry) => entry.iban === account.iban)) {
      throw consentProblem(
        401,
        'CONSENT_INVALID',
        `The consent does not grant ${call.account.need} of account ${call.account.resourceId}`,
      );
    }
  }

  private setBudgetHeaders(reply: FastifyReply, budget: Budget): void {
    reply.headers({
      [BUDGET_HEADERS.limit]: String(budget.limit),
      [BUDGET_HEADERS.remaining]: String(budget.remaining),
      [BUDGET_HEADERS.reset]: String(budget.resetSeconds),
    });
  }
}
