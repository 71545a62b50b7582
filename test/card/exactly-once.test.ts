import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { InDoubtResolver } from '#src/platform/in-doubt/in-doubt-settlers.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '4556390755719395',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Grace Hopper',
  cvv: '321',
};

describe('card payments exactly once: a lost answer is found by merchant_ref, never charged twice', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  beforeAll(async () => {
    // Many injected failures in a row: the merchant's circuit must not open in between.
    sut = await startTestGateway({
      UPSTREAM_RETRY_DELAYS_MS: '10,10',
      UPSTREAM_BREAKER_FAILURES: '100',
    });
    app = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const pay = (body: object, key: string) =>
    sut.app.inject({
      method: 'POST',
      url: '/v1/card/payments',
      headers: { ...bearer(app.key), 'idempotency-key': key },
      payload: body,
    });
  const atProvider = async (merchantRef: string) =>
    (
      await sut.app.inject({
        method: 'GET',
        url: `/v1/card/payments?merchantRef=${encodeURIComponent(merchantRef)}`,
        headers: bearer(app.key),
      })
    ).json() as { totalCount: number; items: { token: string; status: string }[] };
  const creations = () => sut.sandbox.card.callCounts().createPayment ?? 0;

  it('binds the key to the payment in the statement that stores the payment, before the provider is called', async () => {
    // The texts of the statements the payment sends (every pool's client is a pg.Client).
    const texts: string[] = [];
    const proto = pg.Client.prototype;
    const original = proto.query;
    Reflect.set(proto, 'query', function (this: pg.Client, ...args: unknown[]): unknown {
      const [first] = args;
      texts.push(typeof first === 'string' ? first : String((first as { text?: string }).text));
      return Reflect.apply(original, this, args);
    });
    const key = randomUUID();
    let answer;
    try {
      answer = await pay({ amount: 1200, ...CARD }, key);
    } finally {
      Reflect.set(proto, 'query', original);
    }
    expect(answer.statusCode).toBe(201);
    const binds = texts.filter((text) => /UPDATE idempotency_records SET resource/.test(text));
    expect(binds).toHaveLength(1);
    expect(binds[0]).toContain('INSERT INTO "provider_resources"');
    const [record]: { resource: string; state: string }[] = await sut.dataSource.query(
      'SELECT resource, state FROM idempotency_records WHERE tenant_id = $1 AND key = $2',
      [app.tenantId, key],
    );
    expect(record).toMatchObject({ state: 'completed' });
    const paymentId = /^\/v1\/card\/payments\/([0-9a-f-]{36})$/.exec(record.resource)?.[1];
    const [row]: { merchant_ref: string }[] = await sut.dataSource.query(
      'SELECT merchant_ref FROM provider_resources WHERE id = $1',
      [paymentId],
    );
    expect(row.merchant_ref).toBe(answer.json().merchantRef);

    // The stored answer's commit does not wait for the disk: a crash may lose it, never the binding.
    // The record as such a crash leaves it: a repeat answers the payment as it stands.
    await sut.dataSource.query(
      `UPDATE idempotency_records SET state = 'in_progress', response_status = NULL, response_body = NULL, response_headers = NULL
        WHERE tenant_id = $1 AND key = $2`,
      [app.tenantId, key],
    );
    const repeat = await pay({ amount: 1200, ...CARD }, key);
    expect(repeat.statusCode).toBe(201);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json()).toMatchObject({
      token: answer.json().token,
      status: 'Captured',
      merchantRef: answer.json().merchantRef,
    });
  });

  it('charges once when the answer is lost, finds the payment by merchant_ref and answers it; the retry replays it', async () => {
    const merchantRef = `order-${randomUUID()}`;
    // The provider makes the payment, then the connection breaks before its answer.
    sut.sandbox.chaos.add({
      operation: 'createPayment',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const before = creations();
    const key = randomUUID();
    const first = await pay({ amount: 2500, ...CARD, merchantRef }, key);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ status: 'Captured', merchantRef, amount: 2500 });
    const retry = await pay({ amount: 2500, ...CARD, merchantRef }, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    expect(creations() - before).toBe(1);
    const found = await atProvider(merchantRef);
    expect(found.totalCount).toBe(1);
    expect(found.items[0].token).toBe(first.json().token);
    const causes = (await sut.dataSource.query(
      `SELECT h.to_status, h.cause FROM status_changes h JOIN provider_resources r ON r.id = h.subject_id
        WHERE r.merchant_ref = $1 ORDER BY h.id`,
      [merchantRef],
    )) as { to_status: string; cause: string }[];
    expect(causes).toEqual([
      { to_status: 'creating', cause: 'created' },
      { to_status: 'unknown', cause: 'upstream-outcome-unknown' },
      { to_status: 'Captured', cause: 'found-by-merchant-ref' },
    ]);
  });

  it('leaves a payment in doubt when the lookup fails too; the resolver settles it by merchant_ref and the key never charges again', async () => {
    const merchantRef = `order-${randomUUID()}`;
    sut.sandbox.chaos.add({
      operation: 'createPayment',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const lookups = sut.sandbox.chaos.add({
      operation: 'listPayments',
      fault: 'status',
      status: 503,
    });
    const before = creations();
    const key = randomUUID();
    const first = await pay({ amount: 2600, ...CARD, merchantRef }, key);
    expect(first.statusCode).toBe(502);
    const problem = first.json();
    expect(problem).toMatchObject({
      outcome: 'unknown',
      merchantRef,
      resource: `/v1/card/payments/${problem.paymentId}`,
    });
    const pending = await sut.app.inject({
      method: 'GET',
      url: problem.resource,
      headers: bearer(app.key),
    });
    expect(pending.statusCode).toBe(409);
    expect(pending.json()).toMatchObject({ type: 'urn:portico:problem:outcome-unknown' });

    // The same key answers the stored outcome and sends nothing.
    const retry = await pay({ amount: 2600, ...CARD, merchantRef }, key);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toMatchObject({ outcome: 'unknown', paymentId: problem.paymentId });
    expect(creations() - before).toBe(1);

    sut.sandbox.chaos.remove(lookups.id);
    // The resolver works rows older than the upstream deadline: age this one.
    await sut.dataSource.query(
      "UPDATE provider_resources SET created_at = now() - interval '1 hour' WHERE id = $1",
      [problem.paymentId],
    );
    await sut.app.get(InDoubtResolver).resolveOnce();
    const settled = await sut.app.inject({
      method: 'GET',
      url: problem.resource,
      headers: bearer(app.key),
    });
    expect(settled.statusCode).toBe(200);
    expect(settled.json()).toMatchObject({ status: 'Captured', merchantRef, amount: 2600 });
    expect((await atProvider(merchantRef)).totalCount).toBe(1);
    expect(creations() - before).toBe(1);
  });

  it('marks a payment the provider never made failed, found absent by merchant_ref, and answers its failure', async () => {
    const merchantRef = `order-${randomUUID()}`;
    // The test card that fails with 500 creates no payment.
    const answer = await pay(
      { amount: 2700, ...CARD, cardNumber: '4888137257116730', merchantRef },
      randomUUID(),
    );
    expect(answer.statusCode).toBe(502);
    expect(answer.json()).toMatchObject({ upstream: { status: 500, code: '99999' } });
    expect(answer.json().outcome).toBeUndefined();
    const [row] = (await sut.dataSource.query(
      'SELECT status FROM provider_resources WHERE merchant_ref = $1',
      [merchantRef],
    )) as { status: string }[];
    expect(row.status).toBe('failed');
  });

  it('names a payment the resolver found never made as not made, on GET and on a same-key retry, for good', async () => {
    const merchantRef = `order-${randomUUID()}`;
    // The connection drops before the provider acts, and the lookup by merchant_ref fails too: in doubt.
    sut.sandbox.chaos.add({ operation: 'createPayment', fault: 'reset', times: 1 });
    const lookups = sut.sandbox.chaos.add({
      operation: 'listPayments',
      fault: 'status',
      status: 503,
    });
    const before = creations();
    const key = randomUUID();
    const body = { amount: 2650, ...CARD, merchantRef };
    const first = await pay(body, key);
    expect(first.json()).toMatchObject({ outcome: 'unknown', merchantRef });
    const { resource, paymentId } = first.json() as { resource: string; paymentId: string };
    sut.sandbox.chaos.remove(lookups.id);
    await sut.dataSource.query(
      "UPDATE provider_resources SET created_at = now() - interval '1 hour' WHERE id = $1",
      [paymentId],
    );
    await sut.app.get(InDoubtResolver).resolveOnce();

    const notMade = {
      status: 409,
      type: 'urn:portico:problem:not-made',
      title: 'Not made by the provider',
      outcome: 'not-made',
      resourceStatus: 'failed',
      id: paymentId,
    };
    for (let round = 0; round < 2; round++) {
      const read = await sut.app.inject({ method: 'GET', url: resource, headers: bearer(app.key) });
      expect(read.statusCode).toBe(409);
      expect(read.json()).toMatchObject({ ...notMade, paymentId, merchantRef });
      expect(read.headers['retry-after']).toBeUndefined();
      const retry = await pay(body, key);
      expect(retry.statusCode).toBe(409);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.headers['retry-after']).toBeUndefined();
      expect(retry.json()).toMatchObject(notMade);
    }
    expect(creations() - before).toBe(0);
    expect((await atProvider(merchantRef)).totalCount).toBe(0);
  });

  it('never refunds twice for one key, even when the answer is lost', async () => {
    const payment = (await pay({ amount: 3000, ...CARD }, randomUUID())).json();
    sut.sandbox.chaos.add({
      operation: 'createRefund',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const key = randomUUID();
    const refund = () =>
      sut.app.inject({
        method: 'POST',
        url: '/v1/card/refunds',
        headers: { ...bearer(app.key), 'idempotency-key': key },
        payload: { payment: payment.token, amount: 1000 },
      });
    const first = await refund();
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      amount: 1000,
      status: 'Captured',
      payment: payment.token,
    });
    const again = await refund();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const read = await sut.app.inject({
      method: 'GET',
      url: `/v1/card/payments/${payment.token}`,
      headers: bearer(app.key),
    });
    expect(read.json()).toMatchObject({ refundAmount: 1000, status: 'Partially Refunded' });
  });
});
