// The ledger's state machine on the test run's database, without a gateway: the provider is the real
// upstream seam over a stand-in transport that answers, refuses or fails. Its rows are of kinds no
// resolver of the app settles (wallet domains, sellers), so that other files' resolvers never take them;
// its own passes act on this file's tenant only.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { DataSource, type Repository } from 'typeorm';
import { testDatabaseUrl } from '../../test/support/test-database.js';
import { problemOf } from '../../test/support/problem-of.js';
import { AccessLogEntry } from '../audit/trail/access-log-entry.entity.js';
import { AccessLogService } from '../audit/trail/access-log.service.js';
import { StatusChange } from '../audit/trail/status-change.entity.js';
import { StatusHistoryService } from '../audit/trail/status-history.service.js';
import {
  StatusTransitionListeners,
  type StatusTransition,
} from '../audit/trail/status-transition-listeners.js';
import { dataSourceOptions } from '../platform/database/data-source-options.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';
import { UpstreamCaller, type SendCall } from '../upstreams/http/upstream-caller.js';
import { ProviderLedger } from './provider-ledger.service.js';
import { ProviderResource } from './provider-resource.entity.js';
import { ResourceStore, type Resource } from './resource-store.js';

type Charge = { token: string; amount: number; status: string };
type Kinds = { wallet_domain: Charge; seller: Charge };
type Row = Resource<Kinds, 'wallet_domain'>;

const logger = pino({ level: 'silent' });

/** The seam as every upstream has it, over a transport each test scripts. */
const caller = new UpstreamCaller(
  {
    name: 'test',
    displayName: 'the provider',
    parseErrorBody: (body) => {
      const code = (body as { error?: { code?: number } } | undefined)?.error?.code;
      return code === undefined ? [] : [{ code: String(code) }];
    },
  },
  { deadlineMs: 2000, retryDelaysMs: [], breaker: { failureThreshold: 1000, openMs: 1000 } },
  logger,
);

type Provider = SendCall<Charge>;
const answers =
  (charge: Charge): Provider =>
  async () => ({ data: charge, response: new Response(JSON.stringify(charge), { status: 200 }) });
const refuses =
  (status: number, code: number): Provider =>
  async () => ({ error: { error: { code } }, response: new Response('{}', { status }) });
const answers5xx: Provider = async () => ({
  error: { error: { code: 1 } },
  response: new Response('{}', { status: 500 }),
});
const throws =
  (code: string): Provider =>
  async () => {
    throw Object.assign(new Error(`the transport failed: ${code}`), { code });
  };

/** A capability's store over the ledger: its kinds, and its upstream's call (refusals thrown). */
class TestStore extends ResourceStore<Kinds> {
  async charge(row: Resource<Kinds>, provider: Provider): Promise<Charge> {
    const answer = await this.callAbout(row.tenantId, 'createCharge', row, () =>
      caller.call({ operation: 'createCharge', safe: false }, provider),
    );
    if (answer.status >= 400 || !answer.data) throw caller.refusal('createCharge', answer);
    return answer.data;
  }
}

/** One replica's ledger on the database. */
interface Replica {
  dataSource: DataSource;
  ledger: ProviderLedger;
  sut: TestStore;
  accessLog: AccessLogService;
  transitions: StatusTransition[];
}

async function replica(url: string): Promise<Replica> {
  const dataSource = new DataSource(
    dataSourceOptions(url, 4, { entities: [ProviderResource, StatusChange, AccessLogEntry] }),
  );
  await dataSource.initialize();
  const listeners = new StatusTransitionListeners();
  const transitions: StatusTransition[] = [];
  listeners.subscribe({
    writes: () => undefined,
    heard: (transition) => transitions.push(transition),
  });
  const accessLog = new AccessLogService(dataSource.getRepository(AccessLogEntry), logger);
  const history = new StatusHistoryService(
    dataSource.getRepository(StatusChange),
    listeners,
    accessLog,
  );
  const ledger = new ProviderLedger(dataSource, history, accessLog, new InDoubtSettlers());
  const sut = new TestStore(ledger, dataSource.getRepository(ProviderResource));
  return { dataSource, ledger, sut, accessLog, transitions };
}

describe('the provider-resource ledger', () => {
  let one: Replica;
  let two: Replica;
  let rows: Repository<ProviderResource>;
  const tenantId = randomUUID();

  beforeAll(async () => {
    one = await replica(testDatabaseUrl());
    two = await replica(testDatabaseUrl());
    rows = one.dataSource.getRepository(ProviderResource);
  });
  afterAll(async () => {
    await one?.accessLog.flushCompletions();
    await one?.dataSource.destroy();
    await two?.dataSource.destroy();
  });

  const historyOf = async (id: string) =>
    (
      await one.dataSource
        .getRepository(StatusChange)
        .find({ where: { subjectId: id }, order: { id: 'ASC' } })
    ).map((change) => [change.fromStatus, change.toStatus, change.cause]);

  const callsAbout = async (id: string) => {
    await one.accessLog.flushCompletions();
    return (
      await one.dataSource
        .getRepository(AccessLogEntry)
        .find({ where: { cardResourceId: id }, order: { id: 'ASC' } })
    ).map((entry) => [entry.operation, entry.outcome]);
  };

  const create = (
    row: Row,
    provider: Provider,
    lookup?: () => Promise<Charge | null | undefined>,
  ) =>
    one.sut.create(row, {
      resource: `/v1/charges/${row.id}`,
      names: () => ({ chargeId: row.id }),
      send: () => one.sut.charge(row, provider),
      settle: (charge) => one.sut.settle(row, charge, charge.status, 'upstream-created'),
      refusedCause: () => 'upstream-refused:test',
      lookup,
    });

  it('begins a row as `creating` with its first history entry', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', {
      amount: 100,
      merchantRef: 'm-begin',
    });
    expect(await rows.findOneByOrFail({ id: row.id })).toMatchObject({
      status: 'creating',
      kind: 'wallet_domain',
      amount: 100,
      merchantRef: 'm-begin',
      token: null,
    });
    expect(await historyOf(row.id)).toEqual([[null, 'creating', 'created']]);
  });

  it('settles an answered create: data, provider id, status, history, its event, a completed call', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    const charge = { token: `ch_${randomUUID()}`, amount: 100, status: 'Captured' };
    await expect(create(row, answers(charge))).resolves.toEqual(charge);
    expect(await rows.findOneByOrFail({ id: row.id })).toMatchObject({
      status: 'Captured',
      token: charge.token,
      data: charge,
    });
    expect(await historyOf(row.id)).toEqual([
      [null, 'creating', 'created'],
      ['creating', 'Captured', 'upstream-created'],
    ]);
    expect(one.transitions.filter((t) => t.subject.id === row.id)).toEqual([
      expect.objectContaining({ fromStatus: 'creating', toStatus: 'Captured' }),
    ]);
    expect(await callsAbout(row.id)).toEqual([['createCharge', 'ok']]);
  });

  it('writes the create’s call ahead with the row, and completes that one row with the answer', async () => {
    const row = await one.sut.begin(
      tenantId,
      'wallet_domain',
      { amount: 100 },
      { operation: 'createCharge' },
    );
    expect(await callsAbout(row.id)).toEqual([['createCharge', 'sent']]);
    const charge = { token: `ch_${randomUUID()}`, amount: 100, status: 'Captured' };
    await expect(create(row, answers(charge))).resolves.toEqual(charge);
    expect(await callsAbout(row.id)).toEqual([['createCharge', 'ok']]);
  });

  it('completes a call written ahead and never sent as `not-sent`, and fails the row', async () => {
    const row = await one.sut.begin(
      tenantId,
      'wallet_domain',
      { amount: 100 },
      { operation: 'createCharge' },
    );
    const problem = await problemOf(
      one.sut.create(row, {
        resource: `/v1/charges/${row.id}`,
        names: () => ({ chargeId: row.id }),
        // Refused before the provider is called (as a missing merchant key would be).
        send: () =>
          Promise.reject(
            caller.refusal('createCharge', {
              status: 409,
              headers: {},
              messages: [],
              latencyMs: 0,
            }),
          ),
        settle: async () => undefined,
      }),
    );
    expect(problem.status).toBe(409);
    expect(await callsAbout(row.id)).toEqual([['createCharge', 'not-sent']]);
    expect((await rows.findOneByOrFail({ id: row.id })).status).toBe('failed');
  });

  it('fails a create the provider refused, and passes the refusal on', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    const problem = await problemOf(create(row, refuses(402, 10011)));
    expect(problem).toMatchObject({ status: 402, extensions: { upstream: { code: '10011' } } });
    expect(row.status).toBe('failed');
    expect((await historyOf(row.id)).at(-1)).toEqual([
      'creating',
      'failed',
      'upstream-refused:test',
    ]);
    expect(await callsAbout(row.id)).toEqual([['createCharge', 'upstream:10011']]);
  });

  it('fails a create that certainly never reached the provider (connection refused)', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    const problem = await problemOf(create(row, throws('ECONNREFUSED')));
    expect(problem).toMatchObject({ status: 502, extensions: { upstream: { sent: false } } });
    expect(problem.extensions?.outcome).toBeUndefined();
    expect((await rows.findOneByOrFail({ id: row.id })).status).toBe('failed');
    expect(await callsAbout(row.id)).toEqual([['createCharge', 'failed:502']]);
  });

  it.each([
    ['a timeout', throws('UND_ERR_HEADERS_TIMEOUT'), 504, 'unknown:504'],
    ['a reset connection', throws('ECONNRESET'), 502, 'unknown:502'],
    ['a 5xx answer', answers5xx, 502, 'failed:502'],
  ])(
    'leaves a create whose outcome is unknown (%s) in doubt, naming the resource to follow',
    async (_name, provider, status, logged) => {
      const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
      const problem = await problemOf(create(row, provider));
      expect(problem).toMatchObject({
        status,
        extensions: { outcome: 'unknown', chargeId: row.id, resource: `/v1/charges/${row.id}` },
      });
      expect((await rows.findOneByOrFail({ id: row.id })).status).toBe('unknown');
      expect((await historyOf(row.id)).at(-1)).toEqual([
        'creating',
        'unknown',
        'upstream-outcome-unknown',
      ]);
      expect(await callsAbout(row.id)).toEqual([['createCharge', logged]]);
    },
  );

  it('answers what a lookup found at once when the outcome was unknown, or the failure when it found nothing', async () => {
    const found = { token: `ch_${randomUUID()}`, amount: 100, status: 'Captured' };
    const first = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    await expect(
      create(first, throws('ECONNRESET'), async () => {
        await one.sut.settle(first, found, found.status, 'found-by-merchant-ref');
        return found;
      }),
    ).resolves.toEqual(found);
    expect(first.status).toBe('Captured');

    const second = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    const problem = await problemOf(
      create(second, throws('ECONNRESET'), async () => {
        await one.sut.transition(second, 'failed', 'not-at-provider');
        return null;
      }),
    );
    // The seam's own failure, not the in-doubt problem: the provider certainly made nothing.
    expect(problem.extensions?.outcome).toBeUndefined();
    expect(second.status).toBe('failed');
  });

  it('leaves a row unchanged when a write on it (a capture) is refused, and in doubt when its outcome is unknown', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    await create(
      row,
      answers({ token: `ch_${randomUUID()}`, amount: 100, status: 'Pre Authorized' }),
    );
    const capture = (provider: Provider) =>
      one.sut.write(row, {
        resource: `/v1/charges/${row.token}`,
        unknownCause: 'capture-outcome-unknown',
        names: () => ({ chargeId: row.token ?? '' }),
        send: () => one.sut.charge(row, provider),
        settle: (charge) => one.sut.settle(row, charge, charge.status, 'captured'),
      });
    await problemOf(capture(refuses(409, 20001)));
    expect(row.status).toBe('Pre Authorized');
    await problemOf(capture(throws('UND_ERR_HEADERS_TIMEOUT')));
    expect((await historyOf(row.id)).at(-1)).toEqual([
      'Pre Authorized',
      'unknown',
      'capture-outcome-unknown',
    ]);
  });

  it('moves a row compare-and-set: a replica that saw an older status loses, and writes nothing', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 100 });
    const stale = await two.sut.byId(tenantId, 'wallet_domain', row.id);
    expect(await one.sut.transition(row, 'unknown', 'upstream-outcome-unknown')).toBe(true);
    expect(await two.sut.transition(stale, 'failed', 'resolver:lifetime-passed')).toBe(false);
    expect(stale.status).toBe('unknown');
    expect(await historyOf(row.id)).toEqual([
      [null, 'creating', 'created'],
      ['creating', 'unknown', 'upstream-outcome-unknown'],
    ]);
    expect(two.transitions.some((t) => t.subject.id === row.id)).toBe(false);
  });

  it('settles rows in doubt with their kind’s settler: found ones settled, absent ones failed, others left', async () => {
    const settledRow = await one.sut.begin(tenantId, 'seller', { amount: 1 });
    const absentRow = await one.sut.begin(tenantId, 'seller', { amount: 2 });
    const failingRow = await one.sut.begin(tenantId, 'seller', { amount: 3 });
    await one.sut.transition(absentRow, 'unknown', 'upstream-outcome-unknown');
    const mine = new Set([settledRow.id, absentRow.id, failingRow.id]);
    let taken = 0;
    const kinds = [
      one.sut.inDoubt('seller', async (row) => {
        if (!mine.has(row.id)) return;
        taken++;
        if (row.amount === 1)
          await one.sut.settle(
            row,
            { token: `sel_${randomUUID()}`, amount: 1, status: 'active' },
            'active',
            'found-at-provider',
          );
        else if (row.amount === 2) await one.sut.transition(row, 'failed', 'not-at-provider');
        else throw new Error('the provider did not answer');
      }),
    ];
    await one.ledger.settleInDoubt(kinds, 0);
    expect(taken).toBe(3);
    const statuses = async () =>
      Promise.all(
        [settledRow, absentRow, failingRow].map(
          async ({ id }) => (await rows.findOneByOrFail({ id })).status,
        ),
      );
    expect(await statuses()).toEqual(['active', 'failed', 'creating']);
    expect((await historyOf(absentRow.id)).at(-1)).toEqual([
      'unknown',
      'failed',
      'not-at-provider',
    ]);
    // The one it could not settle stays leased until its lease lapses; then the next pass takes it.
    await one.ledger.settleInDoubt(kinds, 0);
    expect(taken).toBe(3);
    await rows.update({ id: failingRow.id }, { resolverLeaseUntil: null });
    await one.ledger.settleInDoubt(kinds, 0);
    expect(taken).toBe(4);
  });

  it('leaves a row in doubt to the resolver only after the deadline', async () => {
    const row = await one.sut.begin(tenantId, 'wallet_domain', { amount: 7 });
    const seen: string[] = [];
    const kinds = [one.sut.inDoubt('wallet_domain', async (r) => seen.push(r.id))];
    await one.ledger.settleInDoubt(kinds, 60_000);
    expect(seen).not.toContain(row.id);
  });

  it('gives each row in doubt to one replica only, however many work at once', async () => {
    const begun = await Promise.all(
      Array.from({ length: 30 }, (_, i) => one.sut.begin(tenantId, 'seller', { amount: 100 + i })),
    );
    const mine = new Set(begun.map((row) => row.id));
    const settledBy = new Map<string, string[]>();
    const settler = (name: string, store: TestStore) => [
      store.inDoubt('seller', async (row) => {
        if (!mine.has(row.id)) return;
        settledBy.set(row.id, [...(settledBy.get(row.id) ?? []), name]);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }),
    ];
    await Promise.all([
      one.ledger.settleInDoubt(settler('one', one.sut), 0),
      two.ledger.settleInDoubt(settler('two', two.sut), 0),
    ]);
    for (const row of begun) expect(settledBy.get(row.id)).toHaveLength(1);
  });
});
