// The local rules of a call under a consent and the bookkeeping of its outcome, without a gateway or a
// database: the consent's row, the access log, the budget's counters and the ledger are stand-ins that
// record what the service asked of them.
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { RateLimitService } from '#src/access/auth/rate-limit.service.js';
import type { AccessLogService, AccessOutcome } from '#src/audit/trail/access-log.service.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import type { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import { Consent } from '../consents/consent.entity.js';
import type { ConsentsRepository } from '../consents/consents.repository.js';
import type { ConsentsService } from '../consents/consents.service.js';
import { secondsToUtcMidnight } from './budget.js';
import {
  ConsentAccessService,
  type ConsentAccessGrant,
  type ConsentAccessRule,
} from './consent-access.service.js';
import type { ConsentUsageRepository } from './consent-usage.repository.js';

const TENANT = 'b0c2a1e4-5f3d-4c6b-9a8e-7d1f2e3c4b5a';
const IBAN = 'DE89370400440532013000';
const OTHER_IBAN = 'DE02120300000000202051';

function consentOf(overrides: Partial<Consent> = {}): Consent {
  return Object.assign(new Consent(), {
    id: 'c-1',
    tenantId: TENANT,
    kind: 'ais',
    status: 'valid',
    validUntil: '2099-01-01',
    frequencyPerDay: 4,
    requestedAccess: { balances: [{ iban: IBAN }], transactions: [] },
    grantedAccess: null,
    accounts: [{ resourceId: 'acc-1', iban: IBAN, currency: 'EUR' }],
    ...overrides,
  } as Partial<Consent>);
}

function setup(options: { consent?: Consent; usedToday?: number; gateCount?: number | null } = {}) {
  const events: string[] = [];
  const logged: { kind: string; consentId?: string | null; outcome?: AccessOutcome }[] = [];
  const consent = options.consent;
  const usage = {
    admitAlone: async () =>
      consent ? [{ c_id: consent.id, used_today: options.usedToday ?? 0, consent }] : [],
    giveBack: async () => void events.push('giveBack'),
    useUpToday: async (_id: string, limit: number) => void events.push(`useUpToday:${limit}`),
  };
  const consentRows = { hydrate: (row: { consent: Consent }) => row.consent };
  const consents = {
    expireIfDue: async (subject: Consent) => {
      if (subject.validUntil !== null && subject.validUntil < '2026-01-01')
        subject.status = 'expired';
      return subject.status === 'expired';
    },
    forgottenByBank: async (subject: Consent) => {
      subject.status = 'forgottenByBank';
      events.push('forgottenByBank');
    },
    refresh: async () => void events.push('refresh'),
  };
  const accessLog = {
    record: async (subject: { consentId: string | null }, outcome: AccessOutcome) =>
      void logged.push({ kind: 'record', consentId: subject.consentId, outcome }),
    complete: async (id: string, outcome: AccessOutcome) => {
      logged.push({ kind: `complete:${id}`, outcome });
      return true;
    },
    completeSoon: (id: string, outcome: AccessOutcome) =>
      void logged.push({ kind: `completeSoon:${id}`, outcome }),
    beginGated: async (subject: { consentId: string | null }) => {
      logged.push({ kind: 'beginGated', consentId: subject.consentId });
      return options.gateCount === null
        ? undefined
        : { id: 'log-gated', gate: { budget_count: options.gateCount ?? 1 } };
    },
    carryCompletions: () => {
      throw new Error('no rate-limited admission in these tests');
    },
  };
  const ledger = {
    writeAhead: async (subject: { consentId: string | null }) => {
      logged.push({ kind: 'writeAhead', consentId: subject.consentId });
      return 'log-ahead';
    },
  };
  const metrics = new Metrics();
  const sut = new ConsentAccessService(
    consents as unknown as ConsentsService,
    consentRows as unknown as ConsentsRepository,
    usage as unknown as ConsentUsageRepository,
    accessLog as unknown as AccessLogService,
    metrics,
    { perMinute: 100 } as unknown as RateLimitService,
    ledger as unknown as ProviderLedger,
  );
  return { sut, events, logged, metrics };
}

const balances: ConsentAccessRule = { operation: 'getBalances', kind: 'ais', need: 'balances' };
const attended = { consentId: 'c-1', psuIpAddress: '192.0.2.10' };
const unattended = { consentId: 'c-1' };

/** The problem an admission was refused with. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProblemException);
  const { status, extensions, headers } = (error as ProblemException).init;
  return { status, code: extensions?.code, headers };
}

/** A failure of the bank call as the upstream seam reports it. */
const bankAnswered = (status: number, code: string, headers: Record<string, string> = {}) =>
  new ProblemException({
    status,
    title: code,
    headers,
    extensions: { upstream: { status, code } },
  });

describe('the local rules of a call under a consent', () => {
  it('refuses an unknown consent with 404 and logs the refusal without a consent', async () => {
    const { sut, logged } = setup();
    expect(
      await refusal(
        sut.admit(balances, { tenantId: TENANT, headers: attended, accountId: 'acc-1' }),
      ),
    ).toMatchObject({ status: 404, code: 'CONSENT_UNKNOWN' });
    expect(logged).toEqual([
      {
        kind: 'record',
        consentId: null,
        outcome: expect.objectContaining({ outcome: 'refused:CONSENT_UNKNOWN' }),
      },
    ]);
  });

  it.each([
    ['of the other kind', consentOf({ kind: 'cof' }), 401, 'CONSENT_INVALID'],
    ['past its validUntil', consentOf({ validUntil: '2025-06-30' }), 401, 'CONSENT_EXPIRED'],
    ['not valid (received)', consentOf({ status: 'received' }), 401, 'CONSENT_INVALID'],
    ['forgotten by the bank', consentOf({ status: 'forgottenByBank' }), 401, 'CONSENT_INVALID'],
  ])(
    'refuses a consent %s before the bank, logging the refusal',
    async (_what, consent, status, code) => {
      const { sut, logged } = setup({ consent });
      expect(
        await refusal(
          sut.admit(balances, { tenantId: TENANT, headers: attended, accountId: 'acc-1' }),
        ),
      ).toMatchObject({ status, code });
      expect(logged).toEqual([
        {
          kind: 'record',
          consentId: 'c-1',
          outcome: expect.objectContaining({ outcome: `refused:${code}` }),
        },
      ]);
    },
  );

  it('refuses an account the consent does not cover (403), and an access it does not grant (401)', async () => {
    const { sut } = setup({ consent: consentOf() });
    expect(
      await refusal(
        sut.admit(balances, { tenantId: TENANT, headers: attended, accountId: 'acc-9' }),
      ),
    ).toMatchObject({ status: 403, code: 'RESOURCE_UNKNOWN' });
    const transactions: ConsentAccessRule = { ...balances, need: 'transactions' };
    expect(
      await refusal(
        sut.admit(transactions, { tenantId: TENANT, headers: attended, accountId: 'acc-1' }),
      ),
    ).toMatchObject({ status: 401, code: 'CONSENT_INVALID' });
  });

  it('refuses a confirmation of funds for another IBAN than the consent covers', async () => {
    const consent = consentOf({
      kind: 'cof',
      frequencyPerDay: null,
      requestedAccess: { account: { iban: IBAN } } as Consent['requestedAccess'],
    });
    const { sut } = setup({ consent });
    const funds: ConsentAccessRule = { operation: 'checkFunds', kind: 'cof' };
    expect(
      await refusal(sut.admit(funds, { tenantId: TENANT, headers: unattended, iban: OTHER_IBAN })),
    ).toMatchObject({ status: 403, code: 'RESOURCE_UNKNOWN' });
    const grant = await sut.admit(funds, { tenantId: TENANT, headers: unattended, iban: IBAN });
    expect(grant).toMatchObject({ logId: 'log-ahead', budget: undefined });
    expect(sut.completed(grant)).toBeUndefined();
  });

  it('admits an attended read without a budget unit, and answers the budget as read', async () => {
    const { sut, logged } = setup({ consent: consentOf(), usedToday: 1 });
    const grant = await sut.admit(balances, {
      tenantId: TENANT,
      headers: attended,
      accountId: 'acc-1',
    });
    expect(grant).toMatchObject({ attended: true, logId: 'log-ahead', budget: undefined });
    expect(sut.completed(grant)).toMatchObject({ limit: 4, remaining: 3 });
    expect(logged.map((entry) => entry.kind)).toEqual(['writeAhead', 'completeSoon:log-ahead']);
    expect(logged[1].outcome).toMatchObject({ outcome: 'ok', upstreamStatus: 200 });
  });

  it('takes a unit of the daily budget for an unattended read, with its row', async () => {
    const { sut, logged } = setup({ consent: consentOf(), usedToday: 1, gateCount: 2 });
    const grant = await sut.admit(balances, {
      tenantId: TENANT,
      headers: unattended,
      accountId: 'acc-1',
    });
    expect(grant).toMatchObject({ attended: false, logId: 'log-gated' });
    expect(grant.budget).toMatchObject({ limit: 4, remaining: 2 });
    expect(logged.map((entry) => entry.kind)).toEqual(['beginGated']);
  });

  it('refuses an unattended read once the day is spent: 429 with Retry-After to midnight and the budget headers', async () => {
    for (const spent of [{ usedToday: 4 }, { usedToday: 3, gateCount: null }]) {
      const { sut, logged, metrics } = setup({ consent: consentOf(), ...spent });
      const answer = await refusal(
        sut.admit(balances, { tenantId: TENANT, headers: unattended, accountId: 'acc-1' }),
      );
      expect(answer).toMatchObject({
        status: 429,
        code: 'ACCESS_EXCEEDED',
        headers: { 'X-Access-Budget-Limit': '4', 'X-Access-Budget-Remaining': '0' },
      });
      const retryAfter = Number(answer.headers?.['Retry-After']);
      expect(Math.abs(retryAfter - secondsToUtcMidnight())).toBeLessThanOrEqual(1);
      expect(logged.at(-1)).toMatchObject({
        kind: 'record',
        outcome: { outcome: 'refused:ACCESS_EXCEEDED' },
      });
      const refusals = await metrics.registry
        .getSingleMetric('portico_budget_refusals_total')!
        .get();
      expect(refusals.values[0]?.value).toBe(1);
    }
  });
});

describe('the outcome of a call under a consent', () => {
  async function unattendedGrant(consent = consentOf()) {
    const context = setup({ consent, usedToday: 1, gateCount: 2 });
    const grant: ConsentAccessGrant = await context.sut.admit(balances, {
      tenantId: TENANT,
      headers: unattended,
      accountId: 'acc-1',
    });
    context.logged.length = 0;
    return { ...context, grant };
  }

  it('gives the unit back when the bank refused the read, and logs the bank’s code', async () => {
    const { sut, grant, events, logged } = await unattendedGrant();
    const error = bankAnswered(400, 'FORMAT_ERROR');
    expect(await sut.failed(grant, error)).toBe(error);
    expect(events).toEqual(['giveBack']);
    expect(logged).toEqual([
      {
        kind: 'complete:log-gated',
        outcome: expect.objectContaining({ outcome: 'upstream:FORMAT_ERROR', upstreamStatus: 400 }),
      },
    ]);
  });

  it('uses up the day when the bank says its unattended reads are spent until midnight, not when it throttles', async () => {
    const spent = await unattendedGrant();
    await spent.sut.failed(
      spent.grant,
      bankAnswered(429, 'ACCESS_EXCEEDED', { 'Retry-After': String(secondsToUtcMidnight()) }),
    );
    expect(spent.events).toEqual(['useUpToday:4']);
    const throttled = await unattendedGrant();
    await throttled.sut.failed(
      throttled.grant,
      bankAnswered(429, 'ACCESS_EXCEEDED', { 'Retry-After': '2' }),
    );
    expect(throttled.events).toEqual(['giveBack']);
  });

  it('gives the unit back when the read certainly was not served: a 5xx answer, or nothing sent', async () => {
    for (const upstream of [
      { status: 500, code: 'INTERNAL_SERVER_ERROR' },
      { failure: 'circuit-open', sent: false },
    ]) {
      const { sut, grant, events } = await unattendedGrant();
      const error = new ProblemException({
        status: 502,
        title: 'Bad Gateway',
        extensions: { upstream },
      });
      expect(await sut.failed(grant, error)).toBe(error);
      expect(events).toEqual(['giveBack']);
    }
  });

  it('keeps the unit when the bank may have served the read (no answer)', async () => {
    const { sut, grant, events, logged } = await unattendedGrant();
    const timeout = new ProblemException({
      status: 504,
      title: 'Gateway Timeout',
      extensions: { upstream: { failure: 'timeout', sent: true } },
    });
    expect(await sut.failed(grant, timeout)).toBe(timeout);
    expect(events).toEqual([]);
    expect(logged).toHaveLength(1);
    expect(logged[0].kind).toBe('complete:log-gated');
  });

  it('answers the renewal problem when the bank no longer knows the consent, and records it forgotten', async () => {
    const { sut, grant, events } = await unattendedGrant();
    const answer = await sut.failed(grant, bankAnswered(403, 'CONSENT_UNKNOWN'));
    expect((answer as ProblemException).init).toMatchObject({
      status: 401,
      extensions: { code: 'CONSENT_INVALID', consentId: 'c-1' },
    });
    expect(events).toEqual(['giveBack', 'forgottenByBank']);
    expect(grant.consent.status).toBe('forgottenByBank');
  });

  it('reads the consent again when the bank refuses it for another consent reason', async () => {
    const { sut, grant, events } = await unattendedGrant();
    await sut.failed(grant, bankAnswered(401, 'CONSENT_EXPIRED'));
    expect(events).toEqual(['giveBack', 'refresh']);
  });
});
