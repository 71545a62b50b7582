import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { CardPaymentsService } from '#src/card/payments/card-payments.service.js';
import { InDoubtResolver } from '#src/platform/in-doubt/in-doubt-settlers.js';
import { sandboxWalletToken } from '#src/sandbox/card/wallets/wallet-token.js';
import { ibanOf } from '../support/marketplace.js';
import { eventually } from '../support/chaos.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

type Body = Record<string, unknown>;
type Fault = 'act-then-fail' | 'reset';

/** The card deadline of the gateway under test: the resolver takes rows older than it. */
const DEADLINE_MS = 3000;

/**
 * Card creations whose answer was lost (the sandbox performs the operation and breaks the connection,
 * or breaks it before performing it), settled by the resolver as docs/decisions.md decides per kind:
 * a customer or a notification found among the provider's or failed, an IRIS session and a wallet tokenisation failed
 * (nobody can use what the provider may hold), and a wallet's card token charged in doubt moving its
 * tokenisation once the payment is found.
 */
describe('card creations whose answer was lost, settled by the resolver', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  beforeAll(async () => {
    sut = await startTestGateway({
      UPSTREAM_DEADLINE_MS: String(DEADLINE_MS),
      UPSTREAM_RETRY_DELAYS_MS: '10,10',
      UPSTREAM_BREAKER_FAILURES: '100',
    });
    app = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: {
        ...bearer(app.key),
        ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}),
      },
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() as Body };
  };
  const lose = (operation: string, fault: Fault) =>
    sut.sandbox.chaos.add(
      fault === 'reset'
        ? { operation, fault: 'reset', times: 1 }
        : { operation, fault: 'act-then-fail', then: 'reset', times: 1 },
    );
  /** The row of a lost creation: in doubt, without the provider's id. */
  const lostRow = async (kind: string) => {
    const [row] = (await sut.dataSource.query(
      `SELECT id, status, token FROM provider_resources WHERE tenant_id = $1 AND kind = $2
        ORDER BY created_at DESC LIMIT 1`,
      [app.tenantId, kind],
    )) as { id: string; status: string; token: string | null }[];
    expect(row).toMatchObject({ status: 'unknown', token: null });
    return row.id;
  };
  /** One resolver pass, once the row is past the card deadline (aged by as much, no more). */
  const resolve = async (id: string) => {
    await sut.dataSource.query(
      `UPDATE provider_resources SET created_at = created_at - make_interval(secs => $2::double precision / 1000)
        WHERE id = $1`,
      [id, DEADLINE_MS + 1000],
    );
    await sut.app.get(InDoubtResolver).resolveOnce();
    const [row] = (await sut.dataSource.query(
      'SELECT status, token FROM provider_resources WHERE id = $1',
      [id],
    )) as { status: string; token: string | null }[];
    return row;
  };
  const history = async (id: string) =>
    (
      (await sut.dataSource.query(
        'SELECT to_status, cause FROM status_changes WHERE subject_id = $1 ORDER BY id',
        [id],
      )) as { to_status: string; cause: string }[]
    ).map((change) => `${change.to_status}:${change.cause}`);
  const events = async (type: string, id: string) =>
    (
      (await sut.dataSource.query(
        'SELECT body FROM webhook_events WHERE type = $1 AND tenant_id = $2 ORDER BY created_at',
        [type, app.tenantId],
      )) as { body: string }[]
    )
      .map((event) => (JSON.parse(event.body) as { data: Body }).data)
      .filter((data) => data.porticoId === id);

  const notification = (description: string) => ({
    payeeName: 'Eleni Georgiou',
    payeeEmail: 'eleni@example.com',
    payeePhone: '+306900000001',
    amount: 2500,
    description,
  });

  it('a notification the provider made is found among its notifications by what Portico sent, never one another row holds', async () => {
    const description = `Invoice ${randomUUID()}`;
    // The same notification made once before, its answer kept: the lost one must not take its id.
    const twin = await call('POST', '/v1/card/notifications', notification(description));
    expect(twin.status).toBe(201);
    const madeBefore = sut.sandbox.card.callCounts().createNotification ?? 0;
    lose('createNotification', 'act-then-fail');
    const lost = await call('POST', '/v1/card/notifications', notification(description));
    expect(lost.status).toBe(502);
    expect(lost.body).toMatchObject({ outcome: 'unknown' });
    const id = await lostRow('notification');
    const pending = await call('GET', `/v1/card/notifications/${id}`);
    expect(pending.status).toBe(409);
    expect(pending.body.type).toBe('urn:portico:problem:outcome-unknown');

    const row = await resolve(id);
    expect(row.status).toBe('Pending');
    expect(row.token).toMatch(/^pnt_/);
    expect(row.token).not.toBe(twin.body.token);
    expect((sut.sandbox.card.callCounts().createNotification ?? 0) - madeBefore).toBe(1);
    // The app reads it by Portico's id, and the payee's e-mailed link is the one Portico now tracks.
    const read = await call('GET', `/v1/card/notifications/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ token: row.token, status: 'Pending', description });
    const canceled = await call('DELETE', `/v1/card/notifications/${id}`);
    expect(canceled.body).toMatchObject({ token: row.token, status: 'Canceled' });
    expect(await history(id)).toEqual([
      'creating:created',
      'unknown:upstream-outcome-unknown',
      'Pending:resolver:found-at-provider',
      'Canceled:canceled',
    ]);
    expect(
      (await events('notification.status_changed', id)).map((data) => [
        data.notificationId,
        data.status,
        data.cause,
      ]),
    ).toEqual([
      // Until the provider's id is known it is null (never Portico's id): porticoId names the row.
      [null, 'unknown', 'upstream-outcome-unknown'],
      [row.token, 'Pending', 'resolver:found-at-provider'],
      [row.token, 'Canceled', 'canceled'],
    ]);
  });

  it('a notification the provider never made is failed once its list shows none: not made', async () => {
    const description = `Invoice ${randomUUID()}`;
    lose('createNotification', 'reset');
    const lost = await call('POST', '/v1/card/notifications', notification(description));
    expect(lost.status).toBe(502);
    const id = await lostRow('notification');
    expect(await resolve(id)).toEqual({ status: 'failed', token: null });
    const read = await call('GET', `/v1/card/notifications/${id}`);
    expect(read.status).toBe(409);
    expect(read.body.type).toBe('urn:portico:problem:not-made');
    expect(await history(id)).toEqual([
      'creating:created',
      'unknown:upstream-outcome-unknown',
      'failed:resolver:not-at-provider',
    ]);
    expect((await events('notification.status_changed', id)).map((data) => data.status)).toEqual([
      'unknown',
      'failed',
    ]);
  });

  it('a notification stays in doubt while the provider cannot list', async () => {
    lose('createNotification', 'act-then-fail');
    await call('POST', '/v1/card/notifications', notification(`Invoice ${randomUUID()}`));
    const id = await lostRow('notification');
    const listing = sut.sandbox.chaos.add({
      operation: 'listNotifications',
      fault: 'status',
      status: 503,
    });
    try {
      expect((await resolve(id)).status).toBe('unknown');
    } finally {
      sut.sandbox.chaos.remove(listing.id);
    }
    // The next pass (the lease a pass takes would keep it a minute).
    await sut.dataSource.query(
      'UPDATE provider_resources SET resolver_lease_until = NULL WHERE id = $1',
      [id],
    );
    expect((await resolve(id)).status).toBe('Pending');
  });

  const customer = (fullName: string, card: 'arguments' | string) => ({
    ...(card === 'arguments'
      ? {
          cardNumber: '5217925525906273',
          expirationMonth: '12',
          expirationYear: '2031',
          holderName: 'Nikos Papadopoulos',
        }
      : { token: card }),
    fullName,
    email: 'Nikos@Example.com',
    description: 'Loyalty member',
  });
  const cardToken = async () => {
    const made = await call('POST', '/v1/card/tokens', {
      cardNumber: '4111111111111111',
      expirationMonth: '11',
      expirationYear: '2032',
      holderName: 'Nikos Papadopoulos',
      cvv: '123',
    });
    expect(made.status).toBe(201);
    return made.body.token as string;
  };

  it.each<'arguments' | 'token'>(['arguments', 'token'])(
    'a customer the provider made (card by %s) is found among its customers by what Portico sent, never one another row holds',
    async (cardBy) => {
      const fullName = `Nikos ${randomUUID()}`;
      const card = () => (cardBy === 'arguments' ? 'arguments' : cardToken());
      // The same customer made once before, its answer kept: the lost one must not take its id.
      const twin = await call('POST', '/v1/card/customers', customer(fullName, await card()));
      expect(twin.status).toBe(201);
      const sent = customer(fullName, await card());
      const madeBefore = sut.sandbox.card.callCounts().createCustomer ?? 0;
      lose('createCustomer', 'act-then-fail');
      const lost = await call('POST', '/v1/card/customers', sent);
      expect(lost.status).toBe(502);
      expect(lost.body).toMatchObject({ outcome: 'unknown' });
      const id = await lostRow('customer');
      const pending = await call('GET', `/v1/card/customers/${id}`);
      expect(pending.status).toBe(409);
      expect(pending.body.type).toBe('urn:portico:problem:outcome-unknown');

      const row = await resolve(id);
      expect(row.status).toBe('active');
      expect(row.token).toMatch(/^cus_/);
      expect(row.token).not.toBe(twin.body.token);
      expect((sut.sandbox.card.callCounts().createCustomer ?? 0) - madeBefore).toBe(1);
      const read = await call('GET', `/v1/card/customers/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ token: row.token, fullName, isActive: true });
      expect(await history(id)).toEqual([
        'creating:created',
        'unknown:upstream-outcome-unknown',
        'active:resolver:found-at-provider',
      ]);
    },
  );

  it('a customer the provider never made is failed once its list shows none: not made', async () => {
    lose('createCustomer', 'reset');
    const lost = await call(
      'POST',
      '/v1/card/customers',
      customer(`Nikos ${randomUUID()}`, 'arguments'),
    );
    expect(lost.status).toBe(502);
    const id = await lostRow('customer');
    expect(await resolve(id)).toEqual({ status: 'failed', token: null });
    const read = await call('GET', `/v1/card/customers/${id}`);
    expect(read.status).toBe(409);
    expect(read.body.type).toBe('urn:portico:problem:not-made');
    expect(await history(id)).toEqual([
      'creating:created',
      'unknown:upstream-outcome-unknown',
      'failed:resolver:not-at-provider',
    ]);
  });

  it('a customer not made waits while an identical creation is still in its call, and never takes what that call made', async () => {
    const sent = customer(`Nikos ${randomUUID()}`, 'arguments');
    lose('createCustomer', 'reset');
    expect((await call('POST', '/v1/card/customers', sent)).status).toBe(502);
    const id = await lostRow('customer');
    // The same customer again: made at the provider, its answer still on its way (2 s, within the deadline).
    const madeBefore = sut.sandbox.card.callCounts().createCustomer ?? 0;
    sut.sandbox.chaos.add({ operation: 'createCustomer', fault: 'delay', delayMs: 2000, times: 1 });
    const again = call('POST', '/v1/card/customers', sent);
    await eventually(
      async () => (sut.sandbox.card.callCounts().createCustomer ?? 0) > madeBefore,
      5000,
    );
    // Its object is in the provider's list now, with the lost row's fingerprint: the row waits.
    expect(await resolve(id)).toEqual({ status: 'unknown', token: null });
    const made = await again;
    expect(made.status).toBe(201);
    await sut.dataSource.query(
      'UPDATE provider_resources SET resolver_lease_until = NULL WHERE id = $1',
      [id],
    );
    expect(await resolve(id)).toEqual({ status: 'failed', token: null });
    expect(await history(id)).toEqual([
      'creating:created',
      'unknown:upstream-outcome-unknown',
      'failed:resolver:not-at-provider',
    ]);
  });

  it('a customer stays in doubt while the provider cannot list, then is found', async () => {
    lose('createCustomer', 'act-then-fail');
    await call('POST', '/v1/card/customers', customer(`Nikos ${randomUUID()}`, 'arguments'));
    const id = await lostRow('customer');
    const listing = sut.sandbox.chaos.add({
      operation: 'listCustomers',
      fault: 'status',
      status: 503,
    });
    try {
      expect((await resolve(id)).status).toBe('unknown');
    } finally {
      sut.sandbox.chaos.remove(listing.id);
    }
    await sut.dataSource.query(
      'UPDATE provider_resources SET resolver_lease_until = NULL WHERE id = $1',
      [id],
    );
    expect(await resolve(id)).toMatchObject({
      status: 'active',
      token: expect.stringMatching(/^cus_/),
    });
  });

  let sellers = 0;
  const seller = (email: string, extra: Body = {}) => {
    sellers++;
    return {
      email,
      contactPhone: '+306900000000',
      description: `Seller ${sellers}`,
      business: {
        name: `Business ${sellers}`,
        title: `Business ${sellers} S.A.`,
        taxNumber: `EL${300000000 + sellers}`,
        address: 'Ermou 12, Athens',
      },
      bankAccount: {
        iban: ibanOf('GR', `0110125${String(sellers).padStart(16, '0')}`),
        beneficiaryName: `Business ${sellers}`,
      },
      ...extra,
    };
  };

  it('a seller the provider made is found among its sellers by e-mail, tax number and IBAN, never one another row holds', async () => {
    const email = `seller-${randomUUID()}@shop.example`;
    const sent = seller(email);
    // The same seller made once before, its answer kept: the lost one must not take its id.
    const twin = await call('POST', '/v1/marketplace/sellers', sent);
    expect(twin.status).toBe(201);
    const madeBefore = sut.sandbox.card.callCounts().createSeller ?? 0;
    lose('createSeller', 'act-then-fail');
    const lost = await call('POST', '/v1/marketplace/sellers', sent);
    expect(lost.status).toBe(502);
    expect(lost.body).toMatchObject({ outcome: 'unknown' });
    const id = await lostRow('seller');

    const row = await resolve(id);
    expect(row.status).not.toBe('unknown');
    expect(row.token).toMatch(/^sel_/);
    expect(row.token).not.toBe(twin.body.token ?? twin.body.id);
    expect((sut.sandbox.card.callCounts().createSeller ?? 0) - madeBefore).toBe(1);
    expect(await history(id)).toEqual([
      'creating:created',
      'unknown:upstream-outcome-unknown',
      `${row.status}:resolver:found-at-provider`,
    ]);
  });

  it('a seller the provider never made is failed once its list shows none: not made', async () => {
    lose('createSeller', 'reset');
    const lost = await call(
      'POST',
      '/v1/marketplace/sellers',
      seller(`seller-${randomUUID()}@shop.example`),
    );
    expect(lost.status).toBe(502);
    const id = await lostRow('seller');
    expect(await resolve(id)).toEqual({ status: 'failed', token: null });
    expect(await history(id)).toEqual([
      'creating:created',
      'unknown:upstream-outcome-unknown',
      'failed:resolver:not-at-provider',
    ]);
  });

  it.each<Fault>(['act-then-fail', 'reset'])(
    'an IRIS session whose creation answer was lost (%s) is failed: its form needs the signature that answer held',
    async (fault) => {
      lose('createIrisSession', fault);
      const lost = await call('POST', '/v1/card/iris/sessions', {
        amount: 2000,
        country: 'GR',
        returnUrl: 'https://shop.example/done',
      });
      expect(lost.status).toBe(502);
      const id = await lostRow('iris_session');
      expect(await resolve(id)).toEqual({ status: 'failed', token: null });
      const read = await call('GET', `/v1/card/iris/sessions/${id}`);
      expect(read.body).toMatchObject({ id, status: 'failed', token: null });
      expect(await history(id)).toEqual([
        'creating:created',
        'unknown:upstream-outcome-unknown',
        'failed:resolver:unusable-without-answer',
      ]);
      expect(
        (await events('iris_session.status_changed', id)).map((data) => [data.status, data.cause]),
      ).toEqual([
        ['unknown', 'upstream-outcome-unknown'],
        ['failed', 'resolver:unusable-without-answer'],
      ]);
    },
  );

  const tokenize = (authMethod: 'CRYPTOGRAM_3DS' | 'PAN_ONLY') =>
    call('POST', '/v1/card/wallets/tokenizations', {
      amount: 1250,
      type: 'webwallet',
      token: sandboxWalletToken({ authMethod, expiresAt: Date.now() + 10 * 60_000 }),
      md: 'order-88',
      ...(authMethod === 'PAN_ONLY'
        ? { payerEmail: 'payer@example.com', payerPhone: '+306900000002' }
        : {}),
      returnUrl: 'https://shop.example/checkout/done',
    });

  it.each<[Fault, 'CRYPTOGRAM_3DS' | 'PAN_ONLY']>([
    ['act-then-fail', 'CRYPTOGRAM_3DS'],
    ['act-then-fail', 'PAN_ONLY'],
    ['reset', 'CRYPTOGRAM_3DS'],
  ])(
    'a wallet tokenisation whose answer was lost (%s, %s) is failed: its card token or form was only in that answer',
    async (fault, authMethod) => {
      lose('tokenizeWebWallet', fault);
      const lost = await tokenize(authMethod);
      expect(lost.status).toBe(502);
      const id = await lostRow('wallet_token');
      expect(await resolve(id)).toEqual({ status: 'failed', token: null });
      const read = await call('GET', `/v1/card/wallets/tokenizations/${id}`);
      expect(read.body).toMatchObject({ id, status: 'failed', cardToken: null, form: null });
      expect(await history(id)).toEqual([
        'creating:created',
        'unknown:upstream-outcome-unknown',
        'failed:resolver:unusable-without-answer',
      ]);
    },
  );

  it.each([
    ['found by the lookup at once', false, 'payment-found-by-merchant-ref'],
    ['found by the resolver', true, 'resolver:payment-found-by-merchant-ref'],
  ])(
    "a wallet's card token charged with its answer lost, the payment %s: the tokenisation is charged",
    async (_, lookupFails, cause) => {
      const wallet = await tokenize('CRYPTOGRAM_3DS');
      expect(wallet.body).toMatchObject({ status: 'verified' });
      lose('createPayment', 'act-then-fail');
      const listing =
        lookupFails &&
        sut.sandbox.chaos.add({ operation: 'listPayments', fault: 'status', status: 503 });
      const paid = await call('POST', '/v1/card/payments', {
        token: wallet.body.cardToken,
        amount: 1250,
      });
      if (listing) {
        expect(paid.status).toBe(502);
        sut.sandbox.chaos.remove(listing.id);
        expect((await resolve(paid.body.paymentId as string)).status).toBe('Captured');
      } else expect(paid.status).toBe(201);
      const [payment] = (await sut.dataSource.query(
        "SELECT token FROM provider_resources WHERE kind = 'payment' AND parent_token = $1",
        [wallet.body.cardToken],
      )) as { token: string }[];
      expect(payment.token).toMatch(/^pmt_/);

      const read = await call('GET', `/v1/card/wallets/tokenizations/${wallet.body.id as string}`);
      expect(read.body).toMatchObject({ status: 'charged', paymentId: payment.token });
      expect((await history(wallet.body.id as string)).at(-1)).toBe(`charged:${cause}`);
      const before = sut.sandbox.card.callCounts().createPayment ?? 0;
      const again = await call('POST', '/v1/card/payments', {
        token: wallet.body.cardToken,
        amount: 1250,
      });
      expect(again.status).toBe(409);
      expect(again.body.type).toBe('urn:portico:problem:wallet-token-used');
      expect(sut.sandbox.card.callCounts().createPayment ?? 0).toBe(before);
    },
  );
  it("a wallet's card token charged while its tokenisation's write failed: the resolver's next pass mends it", async () => {
    const wallet = await tokenize('CRYPTOGRAM_3DS');
    // The tokenisation's write fails once after the payment's was made (a database fault between the two).
    const payments = sut.app.get(CardPaymentsService) as unknown as {
      walletCharged: (...args: unknown[]) => Promise<void>;
    };
    const walletCharged = payments.walletCharged.bind(payments);
    payments.walletCharged = () => {
      payments.walletCharged = walletCharged;
      return Promise.reject(new Error('connection terminated'));
    };
    await call('POST', '/v1/card/payments', { token: wallet.body.cardToken, amount: 1250 });
    const [payment] = (await sut.dataSource.query(
      "SELECT token, status FROM provider_resources WHERE kind = 'payment' AND parent_token = $1",
      [wallet.body.cardToken],
    )) as { token: string; status: string }[];
    expect(payment).toMatchObject({ token: expect.stringMatching(/^pmt_/), status: 'Captured' });
    const [stored] = (await sut.dataSource.query(
      'SELECT status FROM provider_resources WHERE id = $1',
      [wallet.body.id],
    )) as { status: string }[];
    expect(stored.status).toBe('verified');

    await sut.app.get(InDoubtResolver).resolveOnce();
    const [mended] = (await sut.dataSource.query(
      'SELECT status FROM provider_resources WHERE id = $1',
      [wallet.body.id],
    )) as { status: string }[];
    expect(mended.status).toBe('charged');
    const read = await call('GET', `/v1/card/wallets/tokenizations/${wallet.body.id as string}`);
    expect(read.body).toMatchObject({ status: 'charged', paymentId: payment.token });
    expect((await history(wallet.body.id as string)).at(-1)).toBe('charged:resolver:payment-made');
  });
});
