import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};

describe('card facade: payments, refunds, tokens, customers, branches through the sandbox over HTTPS', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  let other: { tenantId: string; key: string };
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
    other = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    key = app.key,
    headers: Record<string, string> = {},
  ) =>
    sut.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...headers },
      ...(payload ? { payload } : {}),
    });

  it('gives every new tenant a sandbox merchant, so its app can pay at once', async () => {
    const [row] = (await sut.dataSource.query(
      'SELECT source, secret_key_hint FROM card_credentials WHERE tenant_id = $1',
      [app.tenantId],
    )) as { source: string; secret_key_hint: string }[];
    expect(row).toEqual({ source: 'sandbox', secret_key_hint: expect.stringMatching(/^sk_…/) });
  });

  it('charges a card and answers the payment in camelCase with the masked card only', async () => {
    const created = await call('POST', '/v1/card/payments', {
      amount: 1099,
      ...CARD,
      description: 'Order 1042',
      metadata: { order_id: '1042' },
    });
    expect(created.statusCode).toBe(201);
    const payment = created.json();
    expect(payment).toMatchObject({
      token: expect.stringMatching(/^pmt_/),
      status: 'Captured',
      amount: 1099,
      refundAmount: 0,
      merchantRef: expect.stringMatching(/^portico-[0-9a-f-]{36}$/),
      // metadata keys are the app's own: never renamed
      metadata: { order_id: '1042' },
      card: { bin: '521792', lastFour: '6273', expirationMonth: '12', holderName: 'Ada Lovelace' },
    });
    expect(created.body).not.toContain(CARD.cardNumber);
    // Every name is camelCase but the app's own metadata keys.
    expect(created.body.replace('"order_id"', '')).not.toMatch(/_[a-z]+":/);
    const read = await call('GET', `/v1/card/payments/${payment.token}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().token).toBe(payment.token);
    const listed = await call(
      'GET',
      `/v1/card/payments?merchantRef=${encodeURIComponent(payment.merchantRef)}`,
    );
    expect(listed.json()).toMatchObject({ totalCount: 1, items: [{ token: payment.token }] });
    const updated = await call('PUT', `/v1/card/payments/${payment.token}`, {
      description: 'Order 1042 (gift)',
    });
    expect(updated.json()).toMatchObject({ description: 'Order 1042 (gift)' });
  });

  it('pre-authorises with capture 0, captures once, and refunds partially then fully', async () => {
    const created = await call('POST', '/v1/card/payments', { amount: 2000, capture: 0, ...CARD });
    expect(created.json().status).toBe('Pre Authorized');
    const token = created.json().token as string;
    const key = randomUUID();
    const captured = await call('POST', `/v1/card/payments/${token}/capture`, undefined, app.key, {
      'idempotency-key': key,
    });
    expect(captured.statusCode).toBe(200);
    expect(captured.json().status).toBe('Captured');
    const again = await call('POST', `/v1/card/payments/${token}/capture`, undefined, app.key, {
      'idempotency-key': key,
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(captured.json());
    expect(sut.sandbox.card.callCounts().capturePayment).toBe(1);

    const partial = await call('POST', '/v1/card/refunds', { payment: token, amount: 500 });
    expect(partial.statusCode).toBe(201);
    expect(partial.json()).toMatchObject({
      token: expect.stringMatching(/^ref_/),
      amount: 500,
      payment: token,
    });
    expect((await call('GET', `/v1/card/payments/${token}`)).json()).toMatchObject({
      status: 'Partially Refunded',
      refunded: false,
      refundAmount: 500,
    });
    const rest = await call('POST', '/v1/card/refunds', { payment: token });
    expect(rest.json().amount).toBe(1500);
    expect((await call('GET', `/v1/card/payments/${token}`)).json()).toMatchObject({
      status: 'Refunded',
      refunded: true,
    });
    const refunds = await call('GET', `/v1/card/refunds?payment=${token}`);
    expect(refunds.json().totalCount).toBe(2);
    expect((await call('GET', `/v1/card/refunds/${rest.json().token}`)).json().amount).toBe(1500);

    // The status history of the payment, in Portico's store.
    const history = (await sut.dataSource.query(
      `SELECT h.to_status FROM status_changes h JOIN provider_resources r ON r.id = h.subject_id
        WHERE r.token = $1 AND h.subject_kind = 'card_payment' ORDER BY h.id`,
      [token],
    )) as { to_status: string }[];
    expect(history.map((h) => h.to_status)).toEqual([
      'creating',
      'Pre Authorized',
      'Captured',
      'Partially Refunded',
      'Refunded',
    ]);
  });

  it('names a refund the provider recorded as Failed, reads it, and answers a same-key retry alike without a second refund', async () => {
    for (const cardNumber of ['4916915111701144', '5206140271967502']) {
      const payment = (
        await call('POST', '/v1/card/payments', { amount: 2000, ...CARD, cardNumber })
      ).json().token as string;
      const key = randomUUID();
      const before = sut.sandbox.card.callCounts().createRefund ?? 0;
      const refund = () =>
        call('POST', '/v1/card/refunds', { payment, amount: 700 }, app.key, {
          'idempotency-key': key,
        });
      const failed = await refund();
      expect(failed.statusCode).toBe(502);
      const refundId = failed.json().refundId as string;
      expect(failed.json()).toMatchObject({
        type: 'urn:portico:problem:refund-failed',
        status: 502,
        outcome: 'failed',
        refundId: expect.stringMatching(/^ref_/),
        resource: `/v1/card/refunds/${refundId}`,
        resourceStatus: 'Failed',
        payment,
      });
      const read = await call('GET', failed.json().resource as string);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toMatchObject({
        token: refundId,
        status: 'Failed',
        amount: 700,
        payment,
      });
      const again = await refund();
      expect(again.statusCode).toBe(502);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const { requestId: _first, traceId: _firstTrace, ...firstProblem } = failed.json();
      const { requestId: _again, traceId: _againTrace, ...againProblem } = again.json();
      expect(againProblem).toEqual(firstProblem);
      const atProvider = await call('GET', `/v1/card/refunds?payment=${payment}`);
      expect(atProvider.json().totalCount).toBe(1);
      expect((sut.sandbox.card.callCounts().createRefund ?? 0) - before).toBe(1);
      // The failed refund is found on its payment too (the provider lists only successful ones there).
      const onPayment = {
        refundAmount: 0,
        status: 'Captured',
        refunds: [{ token: refundId, status: 'Failed', amount: 700, payment }],
      };
      expect((await call('GET', `/v1/card/payments/${payment}`)).json()).toMatchObject(onPayment);
      const listed = (await call('GET', '/v1/card/payments?count=20')).json().items as {
        token: string;
      }[];
      expect(listed.find((item) => item.token === payment)).toMatchObject(onPayment);
    }
  });

  it('clears a payment\'s metadata with an empty object as with an empty string ("empty value unsets")', async () => {
    for (const empty of [{}, '']) {
      const payment = (
        await call('POST', '/v1/card/payments', { amount: 1200, ...CARD, metadata: { order: '7' } })
      ).json().token as string;
      const kept = await call('PUT', `/v1/card/payments/${payment}`, { description: 'gift' });
      expect(kept.json()).toMatchObject({ description: 'gift', metadata: { order: '7' } });
      const cleared = await call('PUT', `/v1/card/payments/${payment}`, { metadata: empty });
      expect(cleared.statusCode).toBe(200);
      expect(cleared.json().metadata).toEqual({});
      expect((await call('GET', `/v1/card/payments/${payment}`)).json().metadata).toEqual({});
    }
  });

  it('makes a single-use card token with the public key and pays with it once', async () => {
    const made = await call('POST', '/v1/card/tokens', { ...CARD, amount: 700 });
    expect(made.statusCode).toBe(201);
    const token = made.json();
    expect(token).toMatchObject({
      token: expect.stringMatching(/^ctn_/),
      isUsed: false,
      hasExpired: false,
    });
    const paid = await call('POST', '/v1/card/payments', { amount: 700, token: token.token });
    expect(paid.statusCode).toBe(201);
    expect((await call('GET', `/v1/card/tokens/${token.token}`)).json().isUsed).toBe(true);
    const reused = await call('POST', '/v1/card/payments', { amount: 700, token: token.token });
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toMatchObject({
      type: 'urn:portico:problem:upstream-refused',
      upstream: { status: 400, code: '20007' },
    });
  });

  it('stores a customer, adds and removes cards, charges it, revokes nothing it does not have, deletes it', async () => {
    const { cvv: _cvv, ...noCvv } = CARD;
    const created = await call('POST', '/v1/card/customers', {
      ...noCvv,
      fullName: 'Ada Lovelace',
      email: 'ada@example.com',
    });
    expect(created.statusCode).toBe(201);
    const customer = created.json();
    expect(customer).toMatchObject({
      token: expect.stringMatching(/^cus_/),
      fullName: 'Ada Lovelace',
      isActive: true,
      cards: { totalCount: 1 },
    });
    const added = await call('POST', `/v1/card/customers/${customer.token}/cards`, {
      ...noCvv,
      cardNumber: '4556390755719395',
      defaultCard: 1,
    });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({ token: expect.stringMatching(/^crd_/), lastFour: '9395' });
    expect(
      (await call('GET', `/v1/card/customers/${customer.token}/cards`)).json().totalCount,
    ).toBe(2);
    expect(
      (await call('GET', `/v1/card/customers/${customer.token}/cards/${added.json().token}`)).json()
        .lastFour,
    ).toBe('9395');
    const paid = await call('POST', '/v1/card/payments', { amount: 3100, token: customer.token });
    expect(paid.statusCode).toBe(201);
    expect(paid.json().card.lastFour).toBe('9395');
    const removed = await call(
      'DELETE',
      `/v1/card/customers/${customer.token}/cards/${added.json().token}`,
    );
    expect(removed.json()).toEqual({ token: added.json().token, isDeleted: true });
    const updated = await call('PUT', `/v1/card/customers/${customer.token}`, {
      email: 'ada.lovelace@example.com',
    });
    expect(updated.json().email).toBe('ada.lovelace@example.com');
    expect(
      (await call('GET', `/v1/card/customers/${customer.token}/mandates`)).json(),
    ).toMatchObject({
      totalCount: 0,
    });
    const deleted = await call('DELETE', `/v1/card/customers/${customer.token}`);
    expect(deleted.json()).toMatchObject({ token: customer.token, isActive: false });
    const history = (await sut.dataSource.query(
      `SELECT h.to_status, h.cause FROM status_changes h JOIN provider_resources r ON r.id = h.subject_id
        WHERE r.token = $1 ORDER BY h.id`,
      [customer.token],
    )) as { to_status: string; cause: string }[];
    expect(history.map((h) => h.cause)).toEqual([
      'created',
      'upstream-created',
      `card-added:${added.json().token}`,
      `card-deleted:${added.json().token}`,
      'updated',
      'deleted-by-app',
    ]);
  });

  it("lists the merchant's branches", async () => {
    const branches = await call('GET', '/v1/card/branches?count=5');
    expect(branches.statusCode).toBe(200);
    expect(branches.json().items[0]).toMatchObject({
      token: expect.stringMatching(/^brc_/),
      title: expect.any(String),
    });
  });

  it("answers another tenant's payment, refund and customer with 404, and never calls the provider for it", async () => {
    const payment = (await call('POST', '/v1/card/payments', { amount: 900, ...CARD })).json();
    const refund = (
      await call('POST', '/v1/card/refunds', { payment: payment.token, amount: 100 })
    ).json();
    const { cvv: _cvv, ...noCvv } = CARD;
    const customer = (await call('POST', '/v1/card/customers', noCvv)).json();
    const [row] = (await sut.dataSource.query(
      "SELECT id FROM provider_resources WHERE token = $1 AND kind = 'payment'",
      [payment.token],
    )) as { id: string }[];
    const before = sut.sandbox.card.callCounts();
    for (const [method, url, body] of [
      ['GET', `/v1/card/payments/${payment.token}`],
      ['GET', `/v1/card/payments/${row.id}`],
      ['PUT', `/v1/card/payments/${payment.token}`, { description: 'mine now' }],
      ['POST', `/v1/card/payments/${payment.token}/capture`],
      ['POST', '/v1/card/refunds', { payment: payment.token, amount: 100 }],
      ['GET', `/v1/card/refunds/${refund.token}`],
      ['GET', `/v1/card/refunds?payment=${payment.token}`],
      ['GET', `/v1/card/customers/${customer.token}`],
      ['DELETE', `/v1/card/customers/${customer.token}`],
      ['GET', `/v1/card/customers/${customer.token}/cards`],
    ] as ['GET' | 'POST' | 'PUT' | 'DELETE', string, object?][]) {
      const answer = await call(method, url, body, other.key);
      expect([url, answer.statusCode]).toEqual([url, 404]);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(sut.sandbox.card.callCounts()).toEqual(before);
  });

  it('passes the provider refusals on as problem+json with its status and code', async () => {
    const declined = await call('POST', '/v1/card/payments', {
      amount: 1000,
      ...CARD,
      cardNumber: '4000000000009995',
    });
    expect(declined.statusCode).toBe(402);
    expect(declined.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(declined.json()).toMatchObject({
      type: 'urn:portico:problem:upstream-refused',
      status: 402,
      upstream: { status: 402, code: '40004' },
    });
    const luhn = await call('POST', '/v1/card/payments', {
      amount: 1000,
      ...CARD,
      cardNumber: '5217925525906274',
    });
    expect(luhn.json()).toMatchObject({ status: 400, upstream: { code: '20000' } });
    const unknown = await call('GET', '/v1/card/payments/pmt_doesnotexist');
    expect(unknown.json()).toMatchObject({ status: 404, upstream: { code: '40005' } });
    // A payment the provider declined leaves the app's merchantRef free, as at the provider.
    const ref = `order-${randomUUID()}`;
    await call('POST', '/v1/card/payments', {
      amount: 1000,
      ...CARD,
      cardNumber: '4000000000009995',
      merchantRef: ref,
    });
    const retried = await call('POST', '/v1/card/payments', {
      amount: 1000,
      ...CARD,
      merchantRef: ref,
    });
    expect(retried.statusCode).toBe(201);
    const duplicate = await call('POST', '/v1/card/payments', {
      amount: 1000,
      ...CARD,
      merchantRef: ref,
    });
    expect(duplicate.statusCode).toBe(409);
  });

  it('refuses bad input by its camelCase field names before the provider, from card.yaml schemas', async () => {
    const before = sut.sandbox.card.callCounts().createPayment ?? 0;
    const answer = await call('POST', '/v1/card/payments', {
      amount: 10,
      ...CARD,
      expirationMonth: '13',
      card_number: '4111111111111111',
    });
    expect(answer.statusCode).toBe(400);
    expect(
      answer
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual(['amount', 'card_number', 'expirationMonth']);
    expect(answer.body).not.toContain('4111111111111111');
    const query = await call('GET', '/v1/card/payments?count=21&colour=red');
    expect(query.statusCode).toBe(400);
    expect(
      query
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual(['colour', 'count']);
    expect(sut.sandbox.card.callCounts().createPayment ?? 0).toBe(before);
  });

  it('keeps card numbers and CVVs out of the database and the logs', async () => {
    const pan = '4242424242424242';
    const cvv = '9876';
    await call(
      'POST',
      '/v1/card/payments',
      { amount: 4321, ...CARD, cardNumber: pan, cvv },
      app.key,
      {
        'idempotency-key': randomUUID(),
      },
    );
    await call('POST', '/v1/card/tokens', { ...CARD, cardNumber: pan, cvv }, app.key, {
      'idempotency-key': randomUUID(),
    });
    const tables = [
      'provider_resources',
      'status_changes',
      'access_log',
      'idempotency_records',
      'card_credentials',
    ];
    for (const table of tables) {
      const [dump] = (await sut.dataSource.query(
        `SELECT coalesce(string_agg(to_jsonb(t)::text, ' '), '') AS text FROM ${table} t`,
      )) as { text: string }[];
      expect([table, dump.text.includes(pan)]).toEqual([table, false]);
      // No CVV value under any name (a validation problem may name the field, never hold its value).
      expect([table, /"cvv": ?"\d/i.test(dump.text)]).toEqual([table, false]);
    }
    const logs = sut.logs.join('\n');
    expect(logs).not.toContain(pan);
    expect(logs).not.toMatch(/sk_[A-Za-z0-9]{8,}/);
  });

  it('writes an access-log row ahead of every provider call about a payment, completed with its outcome', async () => {
    const payment = (await call('POST', '/v1/card/payments', { amount: 1500, ...CARD })).json();
    await call('GET', `/v1/card/payments/${payment.token}`);
    const rows = (await sut.dataSource.query(
      `SELECT a.operation, a.outcome, a.upstream_status FROM access_log a
         JOIN provider_resources r ON r.id = a.card_resource_id WHERE r.token = $1 ORDER BY a.id`,
      [payment.token],
    )) as { operation: string; outcome: string; upstream_status: number }[];
    expect(rows).toEqual([
      { operation: 'createPayment', outcome: 'ok', upstream_status: 200 },
      { operation: 'retrievePayment', outcome: 'ok', upstream_status: 200 },
    ]);
  });

  it("shows the auditor every card payment, refund and customer with its history and calls, beside open banking's", async () => {
    const auditor = (await sut.newTenantWithKey('auditor')).key;
    const payment = (await call('POST', '/v1/card/payments', { amount: 1200, ...CARD })).json();
    const refund = (
      await call('POST', '/v1/card/refunds', { payment: payment.token, amount: 200 })
    ).json();
    const listed = await call(
      'GET',
      `/v1/audit/card-resources?tenantId=${app.tenantId}&kind=refund`,
      undefined,
      auditor,
    );
    expect(listed.statusCode).toBe(200);
    const item = listed.json().items.find((r: { token: string }) => r.token === refund.token);
    expect(item).toMatchObject({
      kind: 'refund',
      parentToken: payment.token,
      status: 'Captured',
      amount: 200,
    });
    const payments = await call(
      'GET',
      `/v1/audit/card-resources?tenantId=${app.tenantId}&kind=payment`,
      undefined,
      auditor,
    );
    const row = payments.json().items.find((r: { token: string }) => r.token === payment.token);
    const detail = await call('GET', `/v1/audit/card-resources/${row.id}`, undefined, auditor);
    expect(detail.json()).toMatchObject({
      token: payment.token,
      merchantRef: payment.merchantRef,
      status: 'Partially Refunded',
      history: [
        { from: null, to: 'creating', cause: 'created' },
        { from: 'creating', to: 'Captured', cause: 'upstream-created' },
        { from: 'Captured', to: 'Partially Refunded', cause: 'refunded' },
      ],
    });
    expect(detail.json().accessLog.map((a: { operation: string }) => a.operation)).toEqual([
      'retrievePayment',
      'createPayment',
    ]);
    const accesses = await call(
      'GET',
      `/v1/audit/accesses?tenantId=${app.tenantId}&kind=card&operation=createRefund`,
      undefined,
      auditor,
    );
    expect(accesses.json().items[0]).toMatchObject({
      kind: 'card',
      operation: 'createRefund',
      outcome: 'ok',
    });
    expect((await call('GET', '/v1/audit/card-resources')).statusCode).toBe(403);
  });
});
