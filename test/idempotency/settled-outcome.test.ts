import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { InDoubtResolver } from '#src/platform/in-doubt/in-doubt-settlers.js';
import { PosInDoubtResolver } from '#src/pos/pos-in-doubt-resolver.service.js';
import { eventually } from '../support/chaos.js';
import { consentRequest } from '../support/fixtures.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posCall, posTenant, shown, terminals, type PosTenant } from '../support/pos-gateway.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '4556390755719395',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Grace Hopper',
  cvv: '321',
};

// A key bound to a resource whose first answer was "outcome unknown" (or none: a crash) answers the
// resource as it stands once the resolver settled it, and 409 with Retry-After while it is in doubt.
describe('a same-key retry answers the settled outcome', () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let app: PosTenant;
  beforeAll(async () => {
    // Its own database: its resolver passes would otherwise work other files' rows in doubt.
    database = await ownDatabase('settled');
    sut = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_DEADLINE_MS: '1000',
      UPSTREAM_RETRY_DELAYS_MS: 'none',
      UPSTREAM_BREAKER_FAILURES: '100',
    });
    app = await posTenant(sut);
  });
  afterAll(async () => {
    await sut?.close();
    await database.drop();
  });

  const post = (url: string, payload: object, key: string) =>
    sut.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(app.key), 'idempotency-key': key },
      payload,
    });
  const get = (url: string) => sut.app.inject({ method: 'GET', url, headers: bearer(app.key) });
  const creations = () => sut.sandbox.card.callCounts().createPayment ?? 0;
  /** The resolver works rows older than the deadline: this one is made old enough. */
  const resolveCard = async (id: string) => {
    await sut.dataSource.query(
      `UPDATE provider_resources SET created_at = now() - interval '1 minute', resolver_lease_until = NULL
        WHERE id = $1`,
      [id],
    );
    await sut.app.get(InDoubtResolver).resolveOnce();
  };

  it('a card payment the provider made but whose answer was lost: 409 with Retry-After until settled, then 201 with the Captured payment', async () => {
    const merchantRef = `order-${randomUUID()}`;
    const body = { amount: 4200, ...CARD, merchantRef };
    // The provider records the payment, then the connection drops; the lookup by merchant_ref fails too.
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
    const first = await post('/v1/card/payments', body, key);
    expect(first.statusCode).toBe(502);
    const { paymentId, resource } = first.json() as { paymentId: string; resource: string };

    const inDoubt = await post('/v1/card/payments', body, key);
    expect(inDoubt.statusCode).toBe(409);
    expect(inDoubt.headers['retry-after']).toBe('5');
    expect(inDoubt.headers['idempotent-replayed']).toBe('true');
    expect(inDoubt.json()).toMatchObject({
      type: 'urn:portico:problem:outcome-unknown',
      outcome: 'unknown',
      paymentId,
      merchantRef,
      resource,
    });

    sut.sandbox.chaos.remove(lookups.id);
    await resolveCard(paymentId);
    const settled = await post('/v1/card/payments', body, key);
    expect(settled.statusCode).toBe(201);
    expect(settled.headers['idempotent-replayed']).toBe('true');
    expect(settled.json()).toMatchObject({ status: 'Captured', merchantRef, amount: 4200 });
    expect(settled.json()).toEqual((await get(resource)).json());
    expect(creations() - before).toBe(1);
  });

  it('a card payment answered after the deadline stays 409 with Retry-After while the lookup fails, then answers the payment', async () => {
    const merchantRef = `order-${randomUUID()}`;
    const body = { amount: 4300, ...CARD, merchantRef };
    sut.sandbox.chaos.add({ operation: 'createPayment', fault: 'delay', delayMs: 1500, times: 1 });
    const lookups = sut.sandbox.chaos.add({
      operation: 'listPayments',
      fault: 'status',
      status: 503,
    });
    const before = creations();
    const key = randomUUID();
    const first = await post('/v1/card/payments', body, key);
    expect(first.statusCode).toBe(504);
    const { paymentId } = first.json() as { paymentId: string };
    // The resolver cannot settle it yet: every retry is told to come back, none reaches the provider.
    await resolveCard(paymentId);
    for (let i = 0; i < 3; i++) {
      const again = await post('/v1/card/payments', body, key);
      expect(again.statusCode).toBe(409);
      expect(again.headers['retry-after']).toBe('5');
    }
    sut.sandbox.chaos.remove(lookups.id);
    await resolveCard(paymentId);
    const settled = await post('/v1/card/payments', body, key);
    expect(settled.statusCode).toBe(201);
    expect(settled.json()).toMatchObject({ status: 'Captured', merchantRef });
    expect(creations() - before).toBe(1);
    // Another body under the key is still another request.
    expect((await post('/v1/card/payments', { ...body, amount: 1 }, key)).statusCode).toBe(422);
  });

  it('a consent a crash left `creating` with the bank id stored answers 201 with the consent once the resolver read it', async () => {
    const key = randomUUID();
    const created = await post('/v1/consents', consentRequest(), key);
    expect(created.statusCode).toBe(201);
    const { consentId } = created.json() as { consentId: string };
    // What kill -9 between storing the bank's id and the status leaves: the row `creating`, the key
    // bound to it and still in progress (its claim a minute old: abandoned).
    await sut.dataSource.query(`UPDATE consents SET status = 'creating' WHERE id = $1`, [
      consentId,
    ]);
    await sut.dataSource.query(
      `UPDATE idempotency_records SET state = 'in_progress', response_status = NULL, response_body = NULL,
              response_headers = NULL, created_at = now() - interval '1 minute'
        WHERE key = $1`,
      [key],
    );
    const crashed = await post('/v1/consents', consentRequest(), key);
    expect(crashed.statusCode).toBe(409);
    expect(crashed.headers['retry-after']).toBe('5');
    expect(crashed.json()).toMatchObject({
      outcome: 'unknown',
      resource: `/v1/consents/${consentId}`,
    });

    await sut.dataSource.query(
      "UPDATE consents SET created_at = now() - interval '1 minute' WHERE id = $1",
      [consentId],
    );
    await sut.app.get(InDoubtResolver).resolveOnce();
    const settled = await post('/v1/consents', consentRequest(), key);
    expect(settled.statusCode).toBe(201);
    expect(settled.headers['idempotent-replayed']).toBe('true');
    expect(settled.headers.location).toBe(`/v1/consents/${consentId}`);
    expect(settled.json()).toMatchObject({ consentId, status: 'received' });
  });

  it('a POS payment answered 202 (or left in doubt) answers 200 CAPTURED to the same key once decided', async () => {
    const [terminal] = terminals(sut, app, { outcome: { action: 'never', afterMs: 0 } });
    const body = {
      transactionId: randomUUID(),
      amount: 1240,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    };
    const key = randomUUID();
    const pos = (query = '?wait=0') => post(`/v1/pos/transactions${query}`, body, key);
    const accepted = await pos();
    expect(accepted.statusCode).toBe(202);
    await shown(sut, terminal.token);
    const pending = await pos();
    expect(pending.statusCode).toBe(202);
    expect(pending.headers['idempotent-replayed']).toBe('true');

    sut.sandbox.pos.payer(terminal.token, 'approve');
    await eventually(
      async () => {
        const [row] = (await sut.dataSource.query(
          'SELECT status FROM provider_resources WHERE token = $1',
          [body.transactionId],
        )) as { status: string }[];
        return row.status === 'CAPTURED';
      },
      10_000,
      'the transaction CAPTURED',
      10,
    );
    const decided = await pos();
    expect(decided.statusCode).toBe(200);
    expect(decided.headers['idempotent-replayed']).toBe('true');
    expect(decided.json()).toMatchObject({ transactionId: body.transactionId, status: 'CAPTURED' });
    expect(decided.json()).toEqual(
      (await posCall(sut, app, 'GET', `/v1/pos/transactions/${body.transactionId}`)).json(),
    );
  });

  it('a POS payment whose answer and lookup were lost is settled by the resolver, and the key answers it', async () => {
    const [terminal] = terminals(sut, app);
    sut.sandbox.chaos.add({
      operation: 'createPosTransaction',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    sut.sandbox.chaos.add({
      operation: 'getPosTransaction',
      fault: 'status',
      status: 500,
      times: 2,
    });
    const body = {
      transactionId: randomUUID(),
      amount: 990,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    };
    const key = randomUUID();
    const first = await post('/v1/pos/transactions', body, key);
    expect(first.statusCode).toBe(202);
    await sut.app.get(PosInDoubtResolver).resolveOnce(0);
    const settled = await post('/v1/pos/transactions', body, key);
    expect(settled.statusCode).toBe(200);
    expect(settled.headers['idempotent-replayed']).toBe('true');
    expect(settled.json()).toMatchObject({ transactionId: body.transactionId, status: 'CAPTURED' });
  });
});
