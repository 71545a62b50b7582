import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { posCall, posTenant, terminals, type PosTenant } from '../support/pos-gateway.js';
import { PosStore } from '#src/pos/store/pos-store.service.js';

let sut: TestGateway;
beforeAll(async () => {
  sut = await startTestGateway({ POS_SYNC_WAIT_MS: '20000' });
});
afterAll(() => sut.close());

const payment = (terminal: string, amount = 1240) => ({
  transactionId: randomUUID(),
  amount,
  currency: 'EUR',
  type: 'payment',
  terminal,
});
const voidOf = (terminal: string, original: string) => ({
  transactionId: randomUUID(),
  currency: 'EUR',
  type: 'void',
  terminal,
  originalTransactionId: original,
});

interface Listed {
  transactionId: string;
  status: string;
  type: string;
  terminal: string;
  voidedBy?: string;
}
interface Page {
  totalCount: number;
  page: number;
  pageSize: number;
  items: Listed[];
}

describe('a voided POS payment reads VOIDED, with the void that voided it', () => {
  it('on GET, on a repeat of its request, and in its events', async () => {
    const tenant = await posTenant(sut);
    const [terminal] = terminals(sut, tenant);
    const paid = payment(terminal.token);
    expect((await posCall(sut, tenant, 'POST', '/v1/pos/transactions', paid)).json()).toMatchObject(
      { status: 'CAPTURED' },
    );
    const voiding = voidOf(terminal.token, paid.transactionId);
    const voided = await posCall(sut, tenant, 'POST', '/v1/pos/transactions', voiding);
    expect(voided.json()).toMatchObject({ status: 'CAPTURED', type: 'void' });

    const read = await posCall(sut, tenant, 'GET', `/v1/pos/transactions/${paid.transactionId}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      transactionId: paid.transactionId,
      type: 'payment',
      status: 'VOIDED',
      voidedBy: voiding.transactionId,
      amount: 1240,
      cardNumber: expect.any(String),
    });
    // The same transactionId again answers the transaction as it stands.
    const repeat = await posCall(sut, tenant, 'POST', '/v1/pos/transactions', paid);
    expect(repeat.json()).toMatchObject({ status: 'VOIDED', voidedBy: voiding.transactionId });

    const events = await posCall(
      sut,
      tenant,
      'GET',
      `/v1/webhooks/events?resourceId=${paid.transactionId}`,
    );
    const data = events
      .json<{ items: { payload: { data: Record<string, string | null> } }[] }>()
      .items.map((item) => item.payload.data);
    expect(data.map((event) => `${event.previousStatus}→${event.status}`)).toContain(
      'CAPTURED→VOIDED',
    );
    expect(data.find((event) => event.status === 'VOIDED')).toMatchObject({
      transactionId: paid.transactionId,
      voidedBy: voiding.transactionId,
      cause: 'voided',
    });
    // Every event of the type carries the same names, the void's own included (voidedBy null there).
    const ofVoid = await posCall(
      sut,
      tenant,
      'GET',
      `/v1/webhooks/events?resourceId=${voiding.transactionId}`,
    );
    expect(
      ofVoid.json<{ items: { payload: { data: object } }[] }>().items[0].payload.data,
    ).toMatchObject({ voidedBy: null });
  });
});

describe('a void and its payment settled apart', () => {
  it("are mended by the next read: a fault after the void's settlement leaves its payment CAPTURED only until then", async () => {
    const tenant = await posTenant(sut);
    const [terminal] = terminals(sut, tenant);
    const paid = payment(terminal.token);
    await posCall(sut, tenant, 'POST', '/v1/pos/transactions', paid);
    // The payment's write fails once after the void's was made (a database fault between the two).
    const store = sut.app.get(PosStore) as unknown as { voided: (...args: unknown[]) => unknown };
    const voided = store.voided.bind(store);
    let failures = 0;
    store.voided = () => {
      store.voided = voided;
      failures++;
      return Promise.reject(new Error('connection terminated'));
    };
    const voiding = voidOf(terminal.token, paid.transactionId);
    await posCall(sut, tenant, 'POST', '/v1/pos/transactions', voiding);
    expect(failures).toBe(1);
    const [stored] = (await sut.dataSource.query(
      "SELECT status FROM provider_resources WHERE kind = 'pos_payment' AND token = $1",
      [paid.transactionId],
    )) as { status: string }[];
    expect(stored.status).toBe('CAPTURED');

    const read = await posCall(sut, tenant, 'GET', `/v1/pos/transactions/${paid.transactionId}`);
    expect(read.json()).toMatchObject({ status: 'VOIDED', voidedBy: voiding.transactionId });
  });
});

describe("GET /v1/pos/transactions: the tenant's transactions from Portico's own store", () => {
  let tenant: PosTenant;
  let a: string;
  let b: string;
  const ids: Record<string, string> = {};
  const list = async (query = '', who = tenant) => {
    const answer = await posCall(sut, who, 'GET', `/v1/pos/transactions${query}`);
    expect(answer.statusCode).toBe(200);
    return answer.json<Page>();
  };

  beforeAll(async () => {
    tenant = await posTenant(sut);
    [{ token: a }, { token: b }] = terminals(sut, tenant, { count: 2 });
    const first = payment(a, 1000);
    const second = payment(b, 2000);
    const voiding = voidOf(a, first.transactionId);
    for (const body of [first, second, voiding])
      expect((await posCall(sut, tenant, 'POST', '/v1/pos/transactions', body)).statusCode).toBe(
        200,
      );
    Object.assign(ids, {
      first: first.transactionId,
      second: second.transactionId,
      voiding: voiding.transactionId,
    });
  });

  it('lists every transaction newest first, in the {totalCount, page, pageSize, items} envelope', async () => {
    const all = await list();
    expect(all).toMatchObject({ totalCount: 3, page: 1, pageSize: 50 });
    expect(all.items.map((item) => item.transactionId)).toEqual([
      ids.voiding,
      ids.second,
      ids.first,
    ]);
    expect(all.items[2]).toMatchObject({ status: 'VOIDED', voidedBy: ids.voiding });
    const second = await list('?page=2&pageSize=1');
    expect(second).toMatchObject({ totalCount: 3, page: 2, pageSize: 1 });
    expect(second.items.map((item) => item.transactionId)).toEqual([ids.second]);
  });

  it('filters by terminal, status, type and the day or time it was started', async () => {
    const ofA = await list(`?terminal=${a}`);
    expect(ofA.items.map((item) => item.transactionId).sort()).toEqual(
      [ids.first, ids.voiding].sort(),
    );
    expect((await list('?status=VOIDED')).items.map((item) => item.transactionId)).toEqual([
      ids.first,
    ]);
    expect(
      (await list(`?status=CAPTURED&terminal=${b}`)).items.map((item) => item.transactionId),
    ).toEqual([ids.second]);
    expect((await list('?type=void')).items.map((item) => item.transactionId)).toEqual([
      ids.voiding,
    ]);
    const day = (offset: number) =>
      new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    // createdFrom is inclusive, createdTo exclusive (as the event log's): today is from today to tomorrow.
    expect((await list(`?createdFrom=${day(0)}&createdTo=${day(1)}`)).totalCount).toBe(3);
    expect((await list(`?createdFrom=${day(1)}`)).totalCount).toBe(0);
    expect((await list(`?createdTo=${day(0)}`)).totalCount).toBe(0);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect((await list(`?createdFrom=${hourAgo}`)).totalCount).toBe(3);
  });

  it('shows another tenant none of them, and refuses a bad filter naming it', async () => {
    const other = await posTenant(sut);
    expect(await list('', other)).toMatchObject({ totalCount: 0, items: [] });
    expect((await list(`?terminal=${a}`, other)).totalCount).toBe(0);
    const bad = await posCall(sut, tenant, 'GET', '/v1/pos/transactions?status=DONE&pageSize=500');
    expect(bad.statusCode).toBe(400);
    const fields = bad.json<{ errors: { field: string }[] }>().errors.map((error) => error.field);
    expect(fields.sort()).toEqual(['pageSize', 'status']);
  });
});
