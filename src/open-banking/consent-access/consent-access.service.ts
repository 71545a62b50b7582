import { Injectable } from '@nestjs/common';
import {
  RateLimitService,
  type RateLimitRow,
  type RateLimitState,
} from '#src/access/auth/rate-limit.service.js';
import {
  AccessLogService,
  SENT_PARAMETERS,
  type AccessSubject,
} from '#src/audit/trail/access-log.service.js';
import { StatementGroup } from '#src/platform/database/statement-group.js';
import { currentRequestId } from '#src/platform/logging/request-context.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import { failureOutcome } from '#src/upstreams/http/upstream-caller.js';
import {
  appliedFrequencyPerDay,
  Consent,
  type ConsentAccess,
  type ConsentKind,
} from '../consents/consent.entity.js';
import { ConsentsRepository } from '../consents/consents.repository.js';
import { ConsentsService, consentProblem, renewalProblem } from '../consents/consents.service.js';
import { budgetOf, secondsToUtcMidnight, type Budget } from './budget.js';
import {
  ConsentUsageRepository,
  type AdmissionCall,
  type AdmissionRow,
} from './consent-usage.repository.js';
import type { ConsentHeaders } from './consent-headers.js';

export const BUDGET_HEADERS = {
  limit: 'X-Access-Budget-Limit',
  remaining: 'X-Access-Budget-Remaining',
  reset: 'X-Access-Budget-Reset',
} as const;

/** What a route needs of the consent it is called under (declared with @ConsentAccess). */
export interface ConsentAccessRule {
  /** The facade operation, for the access log. */
  operation: string;
  kind: ConsentKind;
  /** The access the read needs on the account named by the `accountId` path parameter. */
  need?: 'accounts' | 'balances' | 'transactions';
  /** The route's path parameters: checked before admission, so a malformed one leaves no access-log row. */
  params?: new () => object;
}

/** A call admitted under a consent: the consent, and the budget unit it took (unattended reads). */
export interface ConsentAccessGrant {
  rule: ConsentAccessRule;
  tenantId: string;
  consent: Consent;
  attended: boolean;
  /** The user's IP address when present, passed to the bank. */
  psuIpAddress?: string;
  accountId?: string;
  budget?: Budget;
  /** Units of the daily budget taken today when the consent was read (for the headers of attended reads). */
  usedToday: number;
  started: number;
  /** The access-log row written ahead of the bank call, completed with its outcome. */
  logId: string;
}

/** The request as this capability sees it. */
export interface ConsentCallRequest {
  tenantId: string;
  headers: ConsentHeaders;
  accountId?: string;
  /** An IBAN the call names directly (funds confirmation): it must be the consent's. */
  iban?: string;
  /**
   * The API key whose rate limit this call counts against, in the statement that reads the consent
   * (the route defers its rate limit to this service), and what to do with the result: set the
   * headers, and refuse (throw) when the key used up its minute.
   */
  rateLimit?: { keyId: string; apply: (state: RateLimitState) => void };
}

/** Consents read by admissions, at the version they were read (RecentConsents). */
interface KnownConsent {
  version: string;
  consent: Consent;
}

/**
 * The consents this process admitted calls under recently, each at the version of its row: the next
 * admission under one sends that version, and PostgreSQL answers the id alone when the row is still
 * that version (any update of the row changes it), so the consent is not read and built again per
 * call. Every call still reads the row's version, status and tenant in its own admission: nothing is
 * decided on what this holds alone. The oldest entries go when it is full.
 */
class RecentConsents {
  private readonly known = new Map<string, KnownConsent>();

  constructor(private readonly capacity: number) {}

  get(id: string): KnownConsent | undefined {
    return this.known.get(id);
  }

  /** A copy of the consent for one call (calls may change theirs, e.g. its status once expired). */
  static copy(consent: Consent): Consent {
    return Object.assign(new Consent(), consent);
  }

  remember(version: string, consent: Consent): void {
    this.known.delete(consent.id);
    if (this.known.size >= this.capacity) this.known.delete(this.known.keys().next().value!);
    this.known.set(consent.id, { version, consent: RecentConsents.copy(consent) });
  }
}

/** How many consents each process keeps at their last version read (a few MB at most). */
const RECENT_CONSENTS = 10_000;

/** The one account a confirmation-of-funds consent covers. */
const accountOf = (access: ConsentAccess | null) =>
  access && 'account' in access ? access.account : undefined;

/**
 * The local rules of every call under a consent, checked before the bank is called (tenant, consent
 * kind and status, validUntil, the account, the daily budget), and the access log of every such call
 * whatever its outcome. Used by the consent-access guard (admit, and complete when the request ends).
 */
@Injectable()
export class ConsentAccessService {
  /** Admissions counted against a key's rate limit, many concurrent requests in one statement. */
  private readonly admissions: StatementGroup<AdmissionCall, AdmissionRow>;
  private readonly recentConsents = new RecentConsents(RECENT_CONSENTS);

  constructor(
    private readonly consents: ConsentsService,
    private readonly consentRows: ConsentsRepository,
    private readonly usage: ConsentUsageRepository,
    private readonly accessLog: AccessLogService,
    private readonly metrics: Metrics,
    private readonly rateLimits: RateLimitService,
    private readonly ledger: ProviderLedger,
  ) {
    // The group statement carries the completions of calls answered since (AccessLogService.completeSoon).
    this.admissions = new StatementGroup(
      (calls) =>
        accessLog.carryCompletions(
          (completions) => usage.admitGroup(calls, rateLimits.perMinute, completions),
          (rows) => rows[0]?.completed ?? [],
        ),
      'consent-access:admit',
    );
  }

  /**
   * Counts the request (when asked) and reads the consent, in one statement, which also writes the
   * call's access-log row ahead when `subject` is given and the call may go to the bank.
   */
  private async readConsent(
    call: ConsentCallRequest,
    subject: AccessSubject | undefined,
  ): Promise<{ row: AdmissionRow; consent: Consent | undefined }> {
    const { consentId } = call.headers;
    if (!call.rateLimit) {
      const [row] = await this.usage.admitAlone(consentId, call.tenantId);
      return { row: row ?? { used_today: 0 }, consent: row && this.consentRows.hydrate(row) };
    }
    const { keyId, apply } = call.rateLimit;
    const known = this.recentConsents.get(consentId);
    const row = await this.admissions.run([
      keyId,
      consentId,
      call.tenantId,
      subject?.operation ?? '',
      subject?.accountId ?? null,
      subject?.psuPresent ?? false,
      currentRequestId() ?? null,
      subject !== undefined,
      known?.version ?? '',
    ]);
    apply(await this.rateLimits.counted(keyId, row as RateLimitRow));
    return { row, consent: this.consentOf(row, known) };
  }

  /** The consent of an admission's row: the one known at that version, or the row's, remembered. */
  private consentOf(row: AdmissionRow, known: KnownConsent | undefined): Consent | undefined {
    if (row.c_id === null || row.c_id === undefined) return undefined;
    const version = String(row.consent_version);
    if (known && known.version === version) return RecentConsents.copy(known.consent);
    const consent = this.consentRows.hydrate(row)!;
    this.recentConsents.remember(version, consent);
    return consent;
  }

  async admit(rule: ConsentAccessRule, call: ConsentCallRequest): Promise<ConsentAccessGrant> {
    const started = performance.now();
    const attended = call.headers.psuIpAddress !== undefined;
    const subject = (consentId: string | null): AccessSubject => ({
      tenantId: call.tenantId,
      consentId,
      operation: rule.operation,
      accountId: call.accountId ?? null,
      psuPresent: attended,
    });
    // Refused by Portico: the row written ahead is completed with the refusal, or one is recorded.
    const refuse = async (consentId: string | null, error: unknown, loggedAhead?: string) => {
      const code = (error as ProblemException).init?.extensions?.code ?? 'INVALID';
      const outcome = { outcome: `refused:${String(code)}`, latencyMs: elapsedMs(started) };
      if (loggedAhead) await this.accessLog.complete(loggedAhead, outcome);
      else await this.accessLog.record(subject(consentId), outcome);
      return error;
    };
    // A read that takes a unit of the daily budget writes its row with the unit, below.
    const budgeted = rule.kind === 'ais' && !attended;
    // A key over its rate limit is refused here (apply throws), before anything is logged.
    const { row, consent } = await this.readConsent(
      call,
      budgeted ? undefined : subject(call.headers.consentId),
    );
    const loggedAhead = row.log_id ? String(row.log_id) : undefined;
    if (!consent) throw await refuse(null, ConsentsService.unknown(call.headers.consentId));
    const usedToday = Number(row.used_today);
    let unattended: boolean;
    try {
      unattended = await this.check(rule, consent, call, attended);
    } catch (error) {
      throw await refuse(consent.id, error, loggedAhead);
    }
    // Written ahead: from here on the bank may be called, and a crash leaves this row as `sent`.
    // An unattended read takes its unit of the daily budget in the same statement.
    let logId: string;
    let budget: Budget | undefined;
    if (unattended) {
      const limit = this.limitOf(consent);
      // Spent when the consent was read: refused without another statement (units are given back
      // only by refused reads, so a read that races one and is refused here errs on the safe side).
      if (usedToday >= limit) throw await refuse(consent.id, this.budgetSpent(limit));
      const begun = await this.accessLog.beginGated<{ budget_count: number }>(subject(consent.id), {
        name: 'budget',
        cte: ConsentUsageRepository.takeGateCte(
          `$${SENT_PARAMETERS + 1}`,
          `$${SENT_PARAMETERS + 2}`,
        ),
        params: [consent.id, limit],
      });
      if (!begun) throw await refuse(consent.id, this.budgetSpent(limit));
      logId = begun.id;
      budget = budgetOf(limit, begun.gate.budget_count);
    } else {
      logId = loggedAhead ?? (await this.ledger.writeAhead(subject(consent.id)));
    }
    return {
      rule,
      tenantId: call.tenantId,
      consent,
      attended,
      psuIpAddress: call.headers.psuIpAddress,
      accountId: call.accountId,
      budget,
      usedToday,
      started,
      logId,
    };
  }

  /** The 429 of an unattended read beyond the day's budget (the gate found it spent: none remain). */
  private budgetSpent(limit: number): ProblemException {
    const spent = budgetOf(limit, limit);
    this.metrics.recordBudgetRefusal();
    return new ProblemException({
      status: 429,
      type: 'urn:portico:problem:consent:access-exceeded',
      title: 'ACCESS_EXCEEDED',
      detail: `The consent allows ${limit} reads a day without the user present; send PSU-IP-Address when the user is present`,
      headers: { 'Retry-After': String(spent.resetSeconds), ...budgetHeaders(spent) },
      extensions: { code: 'ACCESS_EXCEEDED' },
    });
  }

  /**
   * The call was answered: the budget headers it answers with. Its row is completed after the answer
   * (AccessLogService.completeSoon): the bank has served it, and the row written ahead says so much.
   */
  completed(grant: ConsentAccessGrant): Budget | undefined {
    this.accessLog.completeSoon(grant.logId, {
      outcome: 'ok',
      upstreamStatus: 200,
      latencyMs: elapsedMs(grant.started),
    });
    if (grant.rule.kind !== 'ais') return undefined;
    // Attended reads take no unit: their headers show the budget as read with the consent.
    return grant.budget ?? budgetOf(this.limitOf(grant.consent), grant.usedToday);
  }

  /**
   * The call failed: a refusal by the bank gives the budget unit back (the bank counts successful
   * reads only), unless the bank says the day's unattended reads are used up there (its count can be
   * ahead of Portico's, e.g. reads made under the consent before Portico held it): then the day's
   * budget is used up here too, so that the next unattended reads are refused without calling the
   * bank until its reset. It also brings the consent's status up to date when the bank says it is not usable; no
   * answer (timeout, broken connection) keeps the unit, since the bank may have served the read.
   * Returns what the app is answered: the error, or, when the bank no longer knows the consent, the
   * problem that names it and says it must be renewed (the consent is then `forgottenByBank`).
   */
  async failed(grant: ConsentAccessGrant, error: unknown): Promise<unknown> {
    const init = (error as ProblemException).init;
    const upstream = init?.extensions?.upstream as
      { status?: number; code?: string; failure?: string } | undefined;
    const refusedByBank = upstream?.status !== undefined && init?.status === upstream.status;
    // Certainly not served: nothing sent (refused, TLS, open circuit, a local refusal), or a 5xx answer.
    const notSent =
      !upstream ||
      (upstream as { sent?: boolean }).sent === false ||
      (upstream.status !== undefined && upstream.status >= 500);
    if (grant.budget && refusedByBank && dayUsedUpAtBank(upstream, init?.headers))
      await this.usage.useUpToday(grant.consent.id, grant.budget.limit);
    else if (grant.budget && (refusedByBank || notSent))
      await this.usage.giveBack(grant.consent.id);
    if (refusedByBank) {
      await this.log(
        grant,
        upstream.status ?? null,
        `upstream:${upstream.code ?? upstream.status}`,
      );
      if (upstream.status === 403 && upstream.code === 'CONSENT_UNKNOWN') {
        await this.consents.forgottenByBank(grant.consent);
        return renewalProblem(grant.consent);
      }
      if (upstream.code?.startsWith('CONSENT_'))
        await this.consents.refresh(grant.consent).catch(() => undefined);
      return error;
    }
    if (!upstream) {
      const code = init?.extensions?.code ?? init?.type ?? 'error';
      await this.log(grant, null, `refused:${String(code)}`);
      return error;
    }
    await this.log(grant, upstream.status ?? null, failureOutcome(error));
    return error;
  }

  /** The local rules; whether the read is unattended (takes a unit of the daily budget). */
  private async check(
    rule: ConsentAccessRule,
    consent: Consent,
    call: ConsentCallRequest,
    attended: boolean,
  ): Promise<boolean> {
    if (consent.kind !== rule.kind) {
      const expected = rule.kind === 'ais' ? 'an account-information' : 'a confirmation-of-funds';
      throw consentProblem(401, 'CONSENT_INVALID', `This operation needs ${expected} consent`);
    }
    await this.consents.expireIfDue(consent);
    if (consent.status === 'expired')
      throw consentProblem(
        401,
        'CONSENT_EXPIRED',
        `The consent expired after ${consent.validUntil}`,
      );
    if (consent.status === 'forgottenByBank') throw renewalProblem(consent);
    if (consent.status !== 'valid')
      throw consentProblem(401, 'CONSENT_INVALID', `The consent is ${consent.status}, not valid`);
    this.checkAccount(rule, consent, call);
    return rule.kind === 'ais' && !attended;
  }

  private checkAccount(rule: ConsentAccessRule, consent: Consent, call: ConsentCallRequest): void {
    if (call.iban !== undefined) {
      const account = accountOf(consent.grantedAccess) ?? accountOf(consent.requestedAccess);
      if (account?.iban !== call.iban)
        throw consentProblem(
          403,
          'RESOURCE_UNKNOWN',
          'The account is not the one this consent covers',
        );
    }
    if (!rule.need || call.accountId === undefined) return;
    const account = consent.accounts.find((a) => a.resourceId === call.accountId);
    if (!account)
      throw consentProblem(
        403,
        'RESOURCE_UNKNOWN',
        `The consent does not cover account ${call.accountId}`,
      );
    if (rule.need === 'accounts') return;
    const granted = consent.grantedAccess ?? consent.requestedAccess;
    const list = 'account' in granted ? undefined : granted[rule.need];
    if (!(list ?? []).some((entry) => entry.iban === account.iban)) {
      throw consentProblem(
        401,
        'CONSENT_INVALID',
        `The consent does not grant ${rule.need} of account ${call.accountId}`,
      );
    }
  }

  private limitOf(consent: Consent): number {
    return appliedFrequencyPerDay(consent) ?? 0;
  }

  private log(grant: ConsentAccessGrant, upstreamStatus: number | null, outcome: string) {
    return this.accessLog.complete(grant.logId, {
      outcome,
      upstreamStatus,
      latencyMs: elapsedMs(grant.started),
    });
  }
}

const elapsedMs = (started: number) => Math.round(performance.now() - started);

/**
 * Whether the bank's refusal says the consent's unattended reads are used up for the day: 429
 * ACCESS_EXCEEDED with a Retry-After that reaches the next UTC day. The same code with a short
 * Retry-After (or none) is throttling, and takes nothing from the day's budget.
 */
function dayUsedUpAtBank(
  upstream: { status?: number; code?: string },
  headers: Record<string, string> | undefined,
): boolean {
  if (upstream.status !== 429 || upstream.code !== 'ACCESS_EXCEEDED') return false;
  const retryAfter = Number(headers?.['Retry-After']);
  return Number.isInteger(retryAfter) && retryAfter >= secondsToUtcMidnight() - DAY_SLACK_SECONDS;
}

/** How far the bank's Retry-After may fall short of the next UTC day and still mean it (clock skew). */
const DAY_SLACK_SECONDS = 120;

export function budgetHeaders(budget: Budget): Record<string, string> {
  return {
    [BUDGET_HEADERS.limit]: String(budget.limit),
    [BUDGET_HEADERS.remaining]: String(budget.remaining),
    [BUDGET_HEADERS.reset]: String(budget.resetSeconds),
  };
}
