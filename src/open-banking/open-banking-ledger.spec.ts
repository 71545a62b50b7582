// Open banking's own tables (consents, payments) in the provider-resource ledger, without a gateway:
// the create sequence's failure classes as their history records them, compare-and-set transitions,
// calls written ahead about a payment, and the one lease loop over tables that have no `kind`. The
// provider is the real upstream seam over a stand-in transport. A database of the file's own: the
// lease loop takes every row in doubt of these tables, and other files' rows must not be taken.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { DataSource } from 'typeorm';
import { ownDatabase, type OwnDatabase } from '../../test/support/own-database.js';
import { problemOf } from '../../test/support/problem-of.js';
import { AccessLogEntry } from '../audit/trail/access-log-entry.entity.js';
import { AccessLogService } from '../audit/trail/access-log.service.js';
import { StatusChange } from '../audit/trail/status-change.entity.js';
import { StatusHistoryService } from '../audit/trail/status-history.service.js';
import { StatusTransitionListeners } from '../audit/trail/status-transition-listeners.js';
import { dataSourceOptions } from '../platform/database/data-source-options.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';
import type { LedgerRow, LedgerTable } from '../provider-ledger/ledger-table.js';
import { ProviderLedger, type InDoubtKind } from '../provider-ledger/provider-ledger.service.js';
import { UpstreamCaller, type SendCall } from '../upstreams/http/upstream-caller.js';
import { parseTppMessages } from '../upstreams/open-banking/berlin-group-errors.js';
import { refusedCause } from './bank-creation.js';
import { Consent, type ConsentStatus } from './consents/consent.entity.js';
import { CONSENTS } from './consents/consents.service.js';
import { Payment } from './payments/payment.entity.js';
import { PAYMENTS } from './payments/payments.service.js';

type Created = { id: string; status: string };

const logger = pino({ level: 'silent' });
const caller = new UpstreamCaller(
  { name: 'open-banking', displayName: 'the bank', parseErrorBody: parseTppMessages },
  { deadlineMs: 2000, retryDelaysMs: [], breaker: { failureThreshold: 1000, openMs: 1000 } },
  logger,
);

type Bank = SendCall<Created>;
const answers =
  (created: Created): Bank =>
  async () => ({ data: created, response: new Response(JSON.stringify(created), { status: 201 }) });
const refuses =
  (status: number, code: string): Bank =>
  async () => ({
    error: { tppMessages: [{ category: 'ERROR', code, text: 'refused' }] },
    response: new Response('{}', { status }),
  });
const throws =
  (code: string): Bank =>
  async () => {
    throw Object.assign(new Error(`the transport failed: ${code}`), { code });
  };

/** The bank asked to create something: its answer, or its refusal thrown (as createdAtBank does). */
async function ask(operation: string, bank: Bank): Promise<Created> {
  const answer = await caller.call({ operation, safe: false }, bank);
  if (answer.status >= 400 || !answer.data) throw caller.refusal(operation, answer);
  return answer.data;
}

interface Replica {
  dataSource: DataSource;
  ledger: ProviderLedger;
  accessLog: AccessLogService;
}

async function replica(url: string): Promise<Replica> {
  const dataSource = new DataSource(
    dataSourceOptions(url, 4, { entities: [Consent, Payment, StatusChange, AccessLogEntry] }),
  );
  await dataSource.initialize();
  const accessLog = new AccessLogService(dataSource.getRepository(AccessLogEntry), logger);
  const history = new StatusHistoryService(
    dataSource.getRepository(StatusChange),
    new StatusTransitionListeners(),
    accessLog,
  );
  const ledger = new ProviderLedger(dataSource, history, accessLog, new InDoubtSettlers());
  return { dataSource, ledger, accessLog };
}

describe("open banking's tables in the provider-resource ledger", () => {
  let database: OwnDatabase;
  let one: Replica;
  let two: Replica;
  const tenantId = randomUUID();

  beforeAll(async () => {
    database = await ownDatabase('ob_ledger');
    one = await replica(database.url);
    await one.dataSource.runMigrations();
    two = await replica(database.url);
  });
  afterAll(async () => {
    await one?.accessLog.flushCompletions();
    await one?.dataSource.destroy();
    await two?.dataSource.destroy();
    await database?.drop();
  });

  const newConsent = (status: ConsentStatus = 'creating') =>
    Object.assign(new Consent(), {
      id: randomUUID(),
      tenantId,
      kind: 'ais',
      brandId: 'danube-bank',
      upstreamConsentId: null,
      requestedAccess: { accounts: [{ iban: 'HU42117730161111101800000000' }] },
      grantedAccess: null,
      accounts: [],
      recurringIndicator: null,
      validUntil: null,
      frequencyPerDay: null,
      renewsConsentId: null,
      status,
      redirectUri: 'https://app.example/return',
      nokRedirectUri: null,
      psuReference: null,
      scaRedirect: null,
      scaApproach: null,
      lastScaAt: null,
    } satisfies Partial<Consent>);

  const newPayment = () =>
    Object.assign(new Payment(), {
      id: randomUUID(),
      tenantId,
      brandId: 'danube-bank',
      paymentProduct: 'sepa-credit-transfers',
      upstreamPaymentId: null,
      details: {
        creditorAccount: { iban: 'DE89370400440532013000' },
        creditorName: 'Shop',
        creditorType: 'COMPANY' as const,
        instructedAmount: { amount: '10.00', currency: 'EUR' },
        remittanceInformationUnstructured: 'order 1',
      },
      status: 'creating',
      redirectUri: 'https://app.example/return',
      nokRedirectUri: null,
      psuReference: null,
      scaRedirect: null,
      scaApproach: null,
      lastScaAt: null,
    } satisfies Partial<Payment>);

  const historyOf = async (id: string) =>
    (
      await one.dataSource
        .getRepository(StatusChange)
        .find({ where: { subjectId: id }, order: { id: 'ASC' } })
    ).map((change) => [change.subjectKind, change.fromStatus, change.toStatus, change.cause]);

  const statusOf = async (table: LedgerTable<Consent> | LedgerTable<Payment>, id: string) =>
    (await one.dataSource.getRepository<LedgerRow>(table.entity).findOneByOrFail({ id })).status;

  /** The consents' create sequence as ConsentsService runs it. */
  const createConsent = (consent: Consent, bank: Bank) =>
    one.ledger.create(CONSENTS, consent, {
      resource: `/v1/consents/${consent.id}`,
      names: (row) => ({ consentId: row.id, consentStatus: row.status }),
      send: () => ask('createConsent', bank),
      settle: async (created) => {
        await one.ledger.transition(CONSENTS, consent, created.status, 'upstream-created');
      },
      refusedCause,
    });

  it('begins a consent in its own table with its first history entry, of kind consent', async () => {
    const consent = await one.ledger.begin(CONSENTS, newConsent());
    expect(await statusOf(CONSENTS, consent.id)).toBe('creating');
    expect(await historyOf(consent.id)).toEqual([['consent', null, 'creating', 'created']]);
  });

  it('records the bank’s answer to a creation as the consent’s status', async () => {
    const consent = await one.ledger.begin(CONSENTS, newConsent());
    await createConsent(consent, answers({ id: 'c-1', status: 'received' }));
    expect(await statusOf(CONSENTS, consent.id)).toBe('received');
    expect((await historyOf(consent.id)).at(-1)).toEqual([
      'consent',
      'creating',
      'received',
      'upstream-created',
    ]);
  });

  it('fails a creation the bank refused, with its code in the history, and passes the refusal on', async () => {
    const consent = await one.ledger.begin(CONSENTS, newConsent());
    const problem = await problemOf(createConsent(consent, refuses(400, 'FORMAT_ERROR')));
    expect(problem).toMatchObject({
      status: 400,
      extensions: { upstream: { code: 'FORMAT_ERROR' } },
    });
    expect(await statusOf(CONSENTS, consent.id)).toBe('failed');
    expect((await historyOf(consent.id)).at(-1)).toEqual([
      'consent',
      'creating',
      'failed',
      'upstream-refused:FORMAT_ERROR',
    ]);
  });

  it('fails a creation that certainly never reached the bank as not sent', async () => {
    const consent = await one.ledger.begin(CONSENTS, newConsent());
    const problem = await problemOf(createConsent(consent, throws('ECONNREFUSED')));
    expect(problem.extensions?.outcome).toBeUndefined();
    expect((await historyOf(consent.id)).at(-1)).toEqual([
      'consent',
      'creating',
      'failed',
      'upstream-not-sent',
    ]);
  });

  it('leaves a creation whose outcome is unknown in doubt, naming the consent, its status and where to follow it', async () => {
    const consent = await one.ledger.begin(CONSENTS, newConsent());
    const problem = await problemOf(createConsent(consent, throws('UND_ERR_HEADERS_TIMEOUT')));
    expect(problem).toMatchObject({
      status: 504,
      extensions: {
        outcome: 'unknown',
        consentId: consent.id,
        consentStatus: 'unknown',
        resource: `/v1/consents/${consent.id}`,
      },
    });
    expect(await statusOf(CONSENTS, consent.id)).toBe('unknown');
  });

  it('writes a payment’s call ahead in the access log, about the payment, and completes it with its outcome', async () => {
    const payment = await one.ledger.begin(PAYMENTS, newPayment());
    const subject = { tenantId, paymentId: payment.id, operation: 'getPayment', psuPresent: false };
    await one.ledger.call(subject, () =>
      caller.call({ operation: 'getPayment', safe: true }, answers({ id: 'p', status: 'ACSC' })),
    );
    await problemOf(
      one.ledger.call(subject, () =>
        caller.call({ operation: 'getPayment', safe: false }, throws('UND_ERR_HEADERS_TIMEOUT')),
      ),
    );
    await one.accessLog.flushCompletions();
    const calls = await one.dataSource
      .getRepository(AccessLogEntry)
      .find({ where: { paymentId: payment.id }, order: { id: 'ASC' } });
    expect(calls.map((c) => [c.operation, c.outcome, c.upstreamStatus])).toEqual([
      ['getPayment', 'ok', 201],
      ['getPayment', 'unknown:504', null],
    ]);
  });

  it('moves a payment compare-and-set: a replica that saw an older status loses, and writes nothing', async () => {
    const payment = await one.ledger.begin(PAYMENTS, newPayment());
    const stale = await two.dataSource.getRepository(Payment).findOneByOrFail({ id: payment.id });
    expect(await one.ledger.transition(PAYMENTS, payment, 'RCVD', 'upstream-created')).toBe(true);
    expect(await two.ledger.transition(PAYMENTS, stale, 'failed', 'resolver')).toBe(false);
    expect(stale.status).toBe('RCVD');
    expect(await historyOf(payment.id)).toEqual([
      ['payment', null, 'creating', 'created'],
      ['payment', 'creating', 'RCVD', 'upstream-created'],
    ]);
  });

  it('leases the rows in doubt of both tables, each to one replica, and leaves settled ones alone', async () => {
    const consents = await Promise.all(
      Array.from({ length: 12 }, () => one.ledger.begin(CONSENTS, newConsent('unknown'))),
    );
    const payments = await Promise.all(
      Array.from({ length: 12 }, () => one.ledger.begin(PAYMENTS, newPayment())),
    );
    const settled = await one.ledger.begin(CONSENTS, newConsent('valid'));
    const taken = new Map<string, string[]>();
    const kinds = (name: string): InDoubtKind<LedgerRow>[] =>
      [CONSENTS, PAYMENTS].map((table: LedgerTable<LedgerRow>) => ({
        table,
        settle: async (row: LedgerRow) => {
          taken.set(row.id, [...(taken.get(row.id) ?? []), name]);
          await new Promise((resolve) => setTimeout(resolve, 2));
        },
      }));
    await Promise.all([
      one.ledger.settleInDoubt(kinds('one'), 0),
      two.ledger.settleInDoubt(kinds('two'), 0),
    ]);
    for (const row of [...consents, ...payments]) expect(taken.get(row.id)).toHaveLength(1);
    expect(taken.has(settled.id)).toBe(false);
    // Leased: the next pass leaves them until the lease lapses.
    expect(await one.ledger.settleInDoubt(kinds('one'), 0)).toBe(0);
  });
});
