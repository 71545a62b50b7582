import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ProviderSync } from '#src/platform/provider-sync/provider-sync.js';
import { cardFields } from '../support/card-api.js';
import { eventually } from '../support/chaos.js';
import { InDoubtResolver } from '#src/platform/in-doubt/in-doubt-settlers.js';
import { formOf, page } from '../support/card-pages.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posTenant, terminals, type PosTenant } from '../support/pos-gateway.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { Receiver } from '../webhooks/receiver.js';

type Event = { id: string; type: string; data: Record<string, unknown> };

/**
 * Statuses the provider never pushes reach the app by webhook without anyone reading them: the
 * provider sync reads pending notifications and POS transactions in doubt, and brings IRIS sessions to
 * their end, on its own; two gateways on one database read each pending row once per turn.
 */
describe('provider sync: statuses the provider never pushes', () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let replica: TestGateway;
  let receiver: Receiver;
  let app: PosTenant;

  beforeAll(async () => {
    database = await ownDatabase('sync');
    receiver = await Receiver.start();
    sut = await startTestGateway({
      DATABASE_URL: database.url,
      PROVIDER_SYNC_INTERVAL_MS: '2000',
      WEBHOOK_WORKER_INTERVAL_MS: '100',
      WEBHOOK_RETRY_SCHEDULE_MS: '0',
    });
    // A second gateway on the same database and provider; its sync is driven by the test.
    replica = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_CARD_BASE_URL: sut.sandbox.cardUrl,
      UPSTREAM_POS_BASE_URL: sut.sandbox.posUrl,
      PROVIDER_SYNC_INTERVAL_MS: '600000',
    });
    app = await posTenant(sut);
    const endpoint = await sut.app.inject({
      method: 'POST',
      url: '/v1/webhooks/endpoints',
      headers: bearer(app.key),
      payload: {
        url: receiver.url,
        eventTypes: [
          'notification.status_changed',
          'iris_session.status_changed',
          'pos_transaction.status_changed',
          'card_payment.status_changed',
        ],
      },
    });
    expect(endpoint.statusCode).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await replica?.close();
    await sut?.close();
    await receiver?.close();
    await database?.drop();
  });

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: bearer(app.key),
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };
  const eventOf = (type: string, field: string, id: string, status: string) => () =>
    receiver
      .events()
      .find(
        (event) => event.type === type && event.data[field] === id && event.data.status === status,
      );
  const reads = async (operation: string, rowId: string) =>
    Number(
      (
        (await sut.dataSource.query(
          'SELECT count(*) AS n FROM access_log WHERE operation = $1 AND card_resource_id = $2',
          [operation, rowId],
        )) as { n: string }[]
      )[0].n,
    );
  const rowIdOf = async (token: string) =>
    (
      (await sut.dataSource.query('SELECT id FROM provider_resources WHERE token = $1', [
        token,
      ])) as {
        id: string;
      }[]
    )[0].id;

  it('sends notification.status_changed Paid with the payment within 10 s of the payment on the hosted page, nobody reading it', async () => {
    const created = await call('POST', '/v1/card/notifications', {
      payeeName: 'Eleni Georgiou',
      payeeEmail: 'eleni@example.com',
      payeePhone: '+306900000001',
      amount: 2500,
      description: 'Invoice 42',
      skipNotify: 1,
    });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect((await page(created.body.paymentLinkUrl as string, cardFields())).status).toBe(200);
    const paidAt = Date.now();

    const paid = eventOf('notification.status_changed', 'notificationId', token, 'Paid');
    await receiver.until(() => paid() !== undefined, 10_000);
    expect(Date.now() - paidAt).toBeLessThan(10_000);
    expect((paid() as Event).data).toMatchObject({
      previousStatus: 'Pending',
      status: 'Paid',
      cause: 'provider-sync',
      amount: 2500,
      payment: { token: expect.stringMatching(/^pmt_/), status: 'Captured', amount: 2500 },
    });
    // Read by the sync alone (the facade was never asked), and no more once Paid.
    const rowId = await rowIdOf(token);
    const readsWhenPaid = await reads('retrieveNotification', rowId);
    expect(readsWhenPaid).toBeGreaterThanOrEqual(1);
    // Its turn comes at once (instead of a wait for the interval): a Paid link is not read.
    await sut.dataSource.query(
      `UPDATE provider_resources SET next_sync_at = now() - interval '1 hour' WHERE id = $1`,
      [rowId],
    );
    await sut.app.get(ProviderSync).syncOnce();
    expect(await reads('retrieveNotification', rowId)).toBe(readsWhenPaid);
  }, 30_000);

  it('sends pos_transaction.status_changed CAPTURED when the terminal reports after the provider stopped holding the call, nobody polling', async () => {
    const [terminal] = terminals(sut, app, {
      outcome: { action: 'approve', afterMs: 1_500 },
      holdMs: 300,
      unresponsive: true,
    });
    const transactionId = randomUUID();
    const accepted = await call('POST', '/v1/pos/transactions?wait=0', {
      transactionId,
      amount: 1240,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    });
    expect(accepted.status).toBe(202);
    const approvedAt = Date.now() + 1_500;

    const unknown = eventOf(
      'pos_transaction.status_changed',
      'transactionId',
      transactionId,
      'unknown',
    );
    const captured = eventOf(
      'pos_transaction.status_changed',
      'transactionId',
      transactionId,
      'CAPTURED',
    );
    await receiver.until(() => captured() !== undefined, 12_000);
    expect(Date.now() - approvedAt).toBeLessThan(10_000);
    // The provider answered 10004 first (the terminal had not reported): in doubt, then settled by the sync.
    expect(unknown()).toBeDefined();
    expect((captured() as Event).data).toMatchObject({
      previousStatus: 'unknown',
      status: 'CAPTURED',
      cause: 'provider-sync',
    });
  }, 30_000);

  it('sends iris_session.status_changed expired once an abandoned session outlives its lifetime, nobody reading it', async () => {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount: 1500,
      country: 'GR',
      returnUrl: 'https://shop.example/done',
    });
    expect(created.status).toBe(201);
    const session = created.body as { id: string; token: string };
    const expired = eventOf('iris_session.status_changed', 'sessionId', session.token, 'expired');
    const realNow = Date.now.bind(Date);
    // Portico's clock only, 15 minutes and a second on: the session's lifetime has passed.
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 15 * 60_000 + 1_000);
    try {
      await receiver.until(() => expired() !== undefined, 10_000);
    } finally {
      spy.mockRestore();
    }
    expect((expired() as Event).data).toMatchObject({
      previousStatus: 'created',
      status: 'expired',
      cause: 'lifetime-passed',
      porticoId: session.id,
      paymentId: null,
    });
  }, 30_000);

  it('sends iris_session.status_changed captured with its paymentId once the payment whose answer was lost is settled, nobody reading it', async () => {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount: 1500,
      country: 'GR',
      returnUrl: 'https://shop.example/done',
    });
    const session = created.body as { id: string; token: string };
    // The provider's webhook is held: the payer's return (the callback) is the only message.
    sut.sandbox.card.planDelivery(session.token, {
      order: 'callback-webhook',
      copies: 1,
      holdMs: 60_000,
    });
    const payform = formOf(
      (await call('POST', `/v1/card/iris/sessions/${session.id}/payform`)).body.payload as string,
    );
    expect((await page(payform.action, payform.fields)).status).toBe(200);
    const callback = formOf(
      (await page(`${payform.action}/decision`, { decision: 'approve' })).html,
    );
    // The provider makes the payment from the source, and its answer is lost.
    sut.sandbox.chaos.add({
      operation: 'createPayment',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const returned = await sut.app.inject({
      method: 'POST',
      url: new URL(callback.action).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(callback.fields).toString(),
    });
    expect(returned.statusCode).toBe(303);
    expect(new URL(String(returned.headers.location)).searchParams.get('status')).toBe('pending');
    // The resolver settles the payment by its merchant_ref (rows older than the deadline: age it).
    await sut.dataSource.query(
      "UPDATE provider_resources SET created_at = now() - interval '1 hour' WHERE kind = 'payment' AND merchant_ref = $1",
      [`iris-${session.token}`],
    );
    await sut.app.get(InDoubtResolver).resolveOnce();

    const captured = eventOf('iris_session.status_changed', 'sessionId', session.token, 'captured');
    await receiver.until(() => captured() !== undefined, 10_000);
    expect((captured() as Event).data).toMatchObject({
      previousStatus: 'authorized',
      status: 'captured',
      cause: 'provider-sync:payment-settled',
      paymentId: expect.stringMatching(/^pmt_/),
    });
  }, 30_000);

  it('brings a payment to Partially Refunded after a refund whose answer and whose read of the payment failed, nobody reading it', async () => {
    const paid = await call('POST', '/v1/card/payments', {
      amount: 3000,
      cardNumber: '4556390755719395',
      expirationMonth: '12',
      expirationYear: '2031',
      holderName: 'Grace Hopper',
      cvv: '321',
    });
    expect(paid.status).toBe(201);
    const token = paid.body.token as string;
    const rowId = await rowIdOf(token);
    // The provider refunds and its answer is lost; every read of the payment fails meanwhile.
    sut.sandbox.chaos.add({
      operation: 'createRefund',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    sut.sandbox.chaos.add({
      operation: 'retrievePayment',
      fault: 'status',
      status: 503,
      times: 50,
    });
    const refund = await call('POST', '/v1/card/refunds', { payment: token, amount: 1000 });
    sut.sandbox.chaos.clear();
    expect([201, 202, 409, 504]).toContain(refund.status);
    const rowOf = async () =>
      (
        (await sut.dataSource.query(
          'SELECT status, next_sync_at IS NOT NULL AS owed FROM provider_resources WHERE id = $1',
          [rowId],
        )) as { status: string; owed: boolean }[]
      )[0];
    expect(await rowOf()).toEqual({ status: 'Captured', owed: true });

    // The read owed comes due (after the refund's deadline; the test makes it due now).
    await sut.dataSource.query(
      "UPDATE provider_resources SET next_sync_at = now() - interval '1 second' WHERE id = $1",
      [rowId],
    );
    // This gateway's own turn (every 2 s) may take it first: either reads it once.
    await sut.app.get(ProviderSync).syncOnce();
    await eventually(
      async () => (await rowOf()).status === 'Partially Refunded',
      10_000,
      'the payment refunded',
    );
    expect(await rowOf()).toEqual({ status: 'Partially Refunded', owed: false });
    const refunded = eventOf(
      'card_payment.status_changed',
      'paymentId',
      token,
      'Partially Refunded',
    );
    await receiver.until(() => refunded() !== undefined, 10_000);
    expect((refunded() as Event).data).toMatchObject({
      previousStatus: 'Captured',
      cause: 'provider-sync:read-owed',
    });
    // Read once: the mark is cleared, so later turns leave the payment alone.
    const before = await reads('retrievePayment', rowId);
    await sut.app.get(ProviderSync).syncOnce();
    expect(await reads('retrievePayment', rowId)).toBe(before);
  }, 60_000);

  it('reads a captured pre-authorisation once more after the capture, should its answer not have been recorded', async () => {
    const preAuthorized = await call('POST', '/v1/card/payments', {
      amount: 2000,
      capture: 0,
      cardNumber: '4556390755719395',
      expirationMonth: '12',
      expirationYear: '2031',
      holderName: 'Grace Hopper',
      cvv: '321',
    });
    expect(preAuthorized.body.status).toBe('Pre Authorized');
    const token = preAuthorized.body.token as string;
    const rowId = await rowIdOf(token);
    const owed = async () =>
      (
        (await sut.dataSource.query(
          'SELECT next_sync_at IS NOT NULL AS owed FROM provider_resources WHERE id = $1',
          [rowId],
        )) as { owed: boolean }[]
      )[0].owed;
    expect(await owed()).toBe(false);
    const captured = await call('POST', `/v1/card/payments/${token}/capture`);
    expect(captured.body.status).toBe('Captured');
    expect(await owed()).toBe(true);
    const before = await reads('retrievePayment', rowId);
    await sut.dataSource.query(
      "UPDATE provider_resources SET next_sync_at = now() - interval '1 second' WHERE id = $1",
      [rowId],
    );
    await sut.app.get(ProviderSync).syncOnce();
    await eventually(async () => !(await owed()), 10_000, 'the owed read made');
    expect(await reads('retrievePayment', rowId)).toBe(before + 1);
  }, 60_000);

  it('reads each pending row once per turn when two gateways sync the same database at once', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 24; i++) {
      const created = await call('POST', '/v1/card/notifications', {
        payeeName: 'Eleni Georgiou',
        payeeEmail: 'eleni@example.com',
        payeePhone: '+306900000001',
        amount: 1000 + i,
        description: `Invoice ${i}`,
        skipNotify: 1,
      });
      expect(created.status).toBe(201);
      tokens.push(created.body.token as string);
    }
    const ids = await Promise.all(tokens.map(rowIdOf));
    // Out of the running gateway's own turns until the test makes them due.
    await sut.dataSource.query(
      "UPDATE provider_resources SET next_sync_at = now() + interval '1 hour' WHERE id = ANY($1::uuid[])",
      [ids],
    );
    const readsOf = async () => Promise.all(ids.map((id) => reads('retrieveNotification', id)));
    const before = await readsOf();
    const turn = async () => {
      // Every pending row due now, on both gateways at the same moment.
      await sut.dataSource.query(
        "UPDATE provider_resources SET next_sync_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])",
        [ids],
      );
      await Promise.all([
        sut.app.get(ProviderSync).syncOnce(),
        replica.app.get(ProviderSync).syncOnce(),
      ]);
    };

    await turn();
    expect((await readsOf()).map((n, i) => n - before[i])).toEqual(ids.map(() => 1));
    await turn();
    const after = await readsOf();
    expect(after.map((n, i) => n - before[i])).toEqual(ids.map(() => 2));
    // A row just read is not due again at once: a third turn without the test's nudge reads none of them.
    await Promise.all([
      sut.app.get(ProviderSync).syncOnce(),
      replica.app.get(ProviderSync).syncOnce(),
    ]);
    expect(await readsOf()).toEqual(after);
  }, 60_000);
});
