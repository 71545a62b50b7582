// POS payments exactly once, without a gateway, a database or a terminal: the store is an in-memory
// stand-in for the ledger's rows, and the provider's answers are scripted per call.
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { until } from '../../../test/support/chaos.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import type { UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import type { PosTransactionRequest, PosTransactionResult } from '#src/upstreams/pos/pos.client.js';
import type { PosRefusal, PosRow, PosStore } from '../store/pos-store.service.js';
import { PosTransactionsService } from './pos-transactions.service.js';

const TENANT = '3f0e8f4c-51d2-4b8e-9a7c-2d4e6f8a0b1c';

type Answer = UpstreamAnswer<PosTransactionResult>;
const answer = (status: number, data?: PosTransactionResult, code?: string): Answer => ({
  status,
  data,
  headers: {},
  messages: code ? [{ code, text: `Refused: ${code}` }] : [],
  latencyMs: 5,
});
/** The seam's failure: no answer (in doubt) unless `sent` is false. */
const failure = (sent: boolean) =>
  new ProblemException({
    status: sent ? 504 : 502,
    title: sent ? 'Gateway Timeout' : 'Bad Gateway',
    extensions: { upstream: { failure: sent ? 'timeout' : 'connect', sent } },
  });

/** The ledger's rows of this tenant, each read as a copy (as from the database). */
class MemoryStore {
  private readonly rows = new Map<string, PosRow>();
  readonly calls: string[] = [];
  readonly changes: string[] = [];
  /** The provider's next answers, per operation: an answer, a failure thrown, or a promise. */
  readonly script: Record<string, (Answer | Error | Promise<Answer>)[]> = {
    createPosTransaction: [],
    getPosTransaction: [],
  };

  private copy(row: PosRow): PosRow {
    return { ...row, data: row.data && { ...row.data } };
  }

  async start(tenantId: string, request: PosTransactionRequest): Promise<PosRow | undefined> {
    if ([...this.rows.values()].some((row) => row.token === request.transaction_id))
      return undefined;
    const row = {
      id: randomUUID(),
      tenantId,
      kind: request.type === 'void' ? 'pos_void' : 'pos_payment',
      token: request.transaction_id,
      status: 'creating',
      createdAt: new Date(),
      data: { request, result: null, refusal: null },
    } as unknown as PosRow;
    this.rows.set(row.id, row);
    return this.copy(row);
  }

  async byTransactionId(tenantId: string, transactionId: string) {
    const row = [...this.rows.values()].find(
      (candidate) => candidate.tenantId === tenantId && candidate.token === transactionId,
    );
    return row && this.copy(row);
  }

  async byRowId(id: string) {
    const row = this.rows.get(id);
    return row && this.copy(row);
  }

  async reload(row: PosRow) {
    return this.copy(this.rows.get(row.id)!);
  }

  async transition(row: PosRow, status: string, cause: string) {
    this.rows.get(row.id)!.status = status;
    this.changes.push(`${status} (${cause})`);
    return true;
  }

  async settleResult(row: PosRow, result: PosTransactionResult, cause: string) {
    const stored = this.rows.get(row.id)!;
    stored.data = { ...stored.data!, result };
    await this.transition(row, result.status, cause);
  }

  /** Voids are PosStore's (test/pos/voids-and-list.test.ts); these tests make none. */
  async voidedIfSo() {}

  async refuse(row: PosRow, refusal: PosRefusal) {
    const stored = this.rows.get(row.id)!;
    stored.data = { ...stored.data!, refusal };
    await this.transition(row, 'failed', `upstream-refused:${refusal.code}`);
  }

  async call(_tenantId: string, operation: string): Promise<Answer> {
    this.calls.push(operation);
    const next = this.script[operation]!.shift();
    if (next === undefined) throw new Error(`no answer scripted for ${operation}`);
    if (next instanceof Error) throw next;
    return next;
  }

  status(transactionId: string) {
    return [...this.rows.values()].find((row) => row.token === transactionId)?.status;
  }
}

function setup() {
  const store = new MemoryStore();
  const config = { upstreams: { pos: { paymentDeadlineMs: 60_000 } } } as unknown as AppConfig;
  const sut = new PosTransactionsService(
    store as unknown as PosStore,
    config,
    pino({ level: 'silent' }),
  );
  return { sut, store };
}

const payment = (transactionId = `tx-${randomUUID()}`): PosTransactionRequest => ({
  type: 'payment',
  transaction_id: transactionId,
  terminal: 'trm_0001',
  amount: 1250,
  currency: 'EUR',
});
const captured = (request: PosTransactionRequest): PosTransactionResult => ({
  transaction_id: request.transaction_id,
  status: 'CAPTURED',
  amount: request.amount,
  card_number: '5217 92** **** 6273',
});

/** The problem a call was refused with. */
async function problemOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProblemException);
  return (error as ProblemException).init;
}

describe('POS transactions', () => {
  it('answers 200 with the result when the terminal decides within the wait, and stores it', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(answer(200, captured(request)));
    expect(await sut.start(TENANT, request, 1_000)).toEqual({
      status: 200,
      body: captured(request),
      location: `/v1/pos/transactions/${request.transaction_id}`,
    });
    expect(store.changes).toEqual(['CAPTURED (upstream-answered)']);
    // Read again: from the row, without asking the provider.
    expect((await sut.get(TENANT, request.transaction_id)).status).toBe(200);
    expect(store.calls).toEqual(['createPosTransaction']);
  });

  it('answers 202 INITIATING when the wait is over first; the call goes on and settles the row', async () => {
    const { sut, store } = setup();
    const request = payment();
    let decide = (_answer: Answer) => {};
    store.script.createPosTransaction.push(new Promise<Answer>((done) => (decide = done)));
    const reply = await sut.start(TENANT, request, 0);
    expect(reply).toEqual({
      status: 202,
      location: `/v1/pos/transactions/${request.transaction_id}`,
      body: {
        transaction_id: request.transaction_id,
        terminal: 'trm_0001',
        type: 'payment',
        amount: 1250,
        currency: 'EUR',
        status: 'INITIATING',
      },
    });
    // Meanwhile a read shows what the provider shows.
    store.script.getPosTransaction.push(
      answer(200, { transaction_id: request.transaction_id, status: 'PENDING' }),
    );
    expect(await sut.get(TENANT, request.transaction_id)).toMatchObject({
      status: 202,
      body: { status: 'PENDING', amount: 1250 },
    });
    decide(answer(200, captured(request)));
    await until(() => store.status(request.transaction_id) === 'CAPTURED');
    expect(await sut.get(TENANT, request.transaction_id)).toMatchObject({
      status: 200,
      body: { status: 'CAPTURED' },
    });
    expect(store.calls).toEqual(['createPosTransaction', 'getPosTransaction']);
  });

  it('answers a repeat of the same transaction with its result, never sending it twice; another request under its id is 422', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(answer(200, captured(request)));
    await sut.start(TENANT, request, 1_000);
    expect(await sut.start(TENANT, { ...request }, 1_000)).toMatchObject({
      status: 200,
      body: { status: 'CAPTURED' },
    });
    expect(
      await problemOf(sut.start(TENANT, { ...request, amount: 9_999 } as typeof request, 1_000)),
    ).toMatchObject({ status: 422, type: 'urn:portico:problem:idempotency-key-reused' });
    expect(store.calls).toEqual(['createPosTransaction']);
  });

  it('keeps a refusal with the row and answers it, as the facade status, on every read', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(answer(404, undefined, '10006'));
    const refused = await problemOf(sut.start(TENANT, request, 1_000));
    expect(refused).toMatchObject({
      status: 409,
      extensions: { upstream: { status: 404, code: '10006' } },
    });
    expect(store.status(request.transaction_id)).toBe('failed');
    expect(await problemOf(sut.get(TENANT, request.transaction_id))).toMatchObject({
      status: 409,
      extensions: { upstream: { code: '10006' } },
    });
    expect(store.calls).toEqual(['createPosTransaction']);
  });

  it('answers 202 PENDING, the row in doubt, when the terminal did not report within the provider’s hold', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(answer(408, undefined, '10004'));
    expect(await sut.start(TENANT, request, 1_000)).toMatchObject({
      status: 202,
      body: { status: 'PENDING' },
    });
    expect(store.changes).toEqual(['unknown (terminal-did-not-report)']);
  });

  it('settles a lost answer at once by reading the transaction by its id', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(failure(true));
    store.script.getPosTransaction.push(answer(200, captured(request)));
    expect(await sut.start(TENANT, request, 1_000)).toMatchObject({
      status: 200,
      body: { status: 'CAPTURED' },
    });
    expect(store.changes).toEqual([
      'unknown (upstream-outcome-unknown)',
      'CAPTURED (found-by-transaction-id)',
    ]);
  });

  it('finds a lost transaction not made when the provider does not know its id, once the call is over', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(failure(true));
    store.script.getPosTransaction.push(answer(404, undefined, '10005'));
    expect(await problemOf(sut.start(TENANT, request, 1_000))).toMatchObject({
      status: 409,
      extensions: { outcome: 'not-made', transactionId: request.transaction_id },
    });
    expect(store.status(request.transaction_id)).toBe('failed');
  });

  it('fails a transaction certainly not sent, with the seam’s problem', async () => {
    const { sut, store } = setup();
    const request = payment();
    const notSent = failure(false);
    store.script.createPosTransaction.push(notSent);
    expect(await problemOf(sut.start(TENANT, request, 1_000))).toBe(notSent.init);
    expect(store.changes).toEqual(['failed (upstream-not-sent)']);
    expect(store.calls).toEqual(['createPosTransaction']);
  });

  it('keeps a transaction in doubt when its read fails too, for the resolver; the resolver leaves calls in flight alone', async () => {
    const { sut, store } = setup();
    const request = payment();
    store.script.createPosTransaction.push(failure(true));
    store.script.getPosTransaction.push(failure(true));
    expect(await sut.start(TENANT, request, 1_000)).toMatchObject({
      status: 202,
      body: { status: 'INITIATING' },
    });
    expect(store.status(request.transaction_id)).toBe('unknown');
    store.script.getPosTransaction.push(answer(200, captured(request)));
    await sut.resolve((await store.byTransactionId(TENANT, request.transaction_id))!);
    expect(store.status(request.transaction_id)).toBe('CAPTURED');

    const held = payment();
    store.script.createPosTransaction.push(new Promise<Answer>(() => undefined));
    await sut.start(TENANT, held, 0);
    await sut.resolve((await store.byTransactionId(TENANT, held.transaction_id))!);
    expect(store.calls.filter((call) => call === 'getPosTransaction')).toHaveLength(2);
  });

  it('answers 404 for a transaction the tenant does not have', async () => {
    const { sut } = setup();
    expect(await problemOf(sut.get(TENANT, 'tx-none'))).toMatchObject({ status: 404 });
  });
});
