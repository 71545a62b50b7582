import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};
const NOTIFICATION = {
  payeeName: 'Eleni Georgiou',
  payeeEmail: 'eleni@example.com',
  payeePhone: '+306900000001',
  amount: 2500,
  description: 'Invoice 42',
};

/**
 * Where the seed and the provider's public clients spell an answer differently, card.yaml accepts both
 * and the facade gives the seed's spelling whichever the provider sends: the sandbox answers in one style
 * or the other (control `POST /sandbox/card/answer-style`), and the app sees the same thing.
 */
describe.each(['seed', 'provider-clients'] as const)(
  'card facade when the provider answers in the %s style',
  (style) => {
    let sut: TestGateway;
    let app: { tenantId: string; key: string };
    beforeAll(async () => {
      sut = await startTestGateway();
      app = await sut.newTenantWithKey('app');
      // Every merchant of this gateway's own sandbox (the tenant's among them).
      const set = await request(`${sut.sandbox.scaUrl}/sandbox/card/answer-style`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ style }),
      });
      expect(set.statusCode).toBe(200);
      expect(((await set.body.json()) as { merchants: number }).merchants).toBeGreaterThan(0);
    });
    afterAll(() => sut.close());

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
      sut.app.inject({
        method,
        url,
        headers: bearer(app.key),
        ...(payload ? { payload } : {}),
      });
    /** What the provider itself answers (in this style), read inside the sandbox. */
    const atProvider = (operationId: string, params: Record<string, string>) => {
      const id = Object.values(params)[0];
      const merchantId = sut.sandbox.card.merchantIds().find((candidate) => {
        const book = sut.sandbox.card.merchantBook(candidate);
        return book?.payments.has(id) || book?.notifications.has(id);
      }) as string;
      const answer = sut.sandbox.card.handle(merchantId, {
        operationId,
        params,
        query: {},
        body: {},
      }) as { status: number; body: Record<string, unknown> };
      return answer.body;
    };

    it('reads a pre-authorisation as Pre Authorized, keeps that in its history and captures it', async () => {
      const created = await call('POST', '/v1/card/payments', {
        amount: 1200,
        ...CARD,
        capture: 0,
      });
      expect(created.statusCode).toBe(201);
      const token = created.json().token as string;
      expect(atProvider('retrievePayment', { paymentId: token }).status).toBe(
        style === 'seed' ? 'Pre Authorized' : 'Pre authorized',
      );
      expect(created.json().status).toBe('Pre Authorized');
      expect((await call('GET', `/v1/card/payments/${token}`)).json().status).toBe(
        'Pre Authorized',
      );
      const listed = await call('GET', '/v1/card/payments?count=1');
      expect(listed.json().items[0]).toMatchObject({ token, status: 'Pre Authorized' });
      const captured = await call('POST', `/v1/card/payments/${token}/capture`);
      expect(captured.json().status).toBe('Captured');
      const history = (await sut.dataSource.query(
        `SELECT h.to_status FROM status_changes h JOIN provider_resources r ON r.id = h.subject_id
          WHERE r.token = $1 AND h.subject_kind = 'card_payment' ORDER BY h.id`,
        [token],
      )) as { to_status: string }[];
      expect(history.map((h) => h.to_status)).toEqual(['creating', 'Pre Authorized', 'Captured']);
    });

    it('reads a new notification as Pending', async () => {
      const created = await call('POST', '/v1/card/notifications', NOTIFICATION);
      expect(created.statusCode).toBe(201);
      const token = created.json().token as string;
      expect(atProvider('retrieveNotification', { notificationId: token }).status).toBe(
        style === 'seed' ? 'Pending' : 'Awaiting',
      );
      expect(created.json().status).toBe('Pending');
      expect((await call('GET', `/v1/card/notifications/${token}`)).json().status).toBe('Pending');
    });

    it('answers an unknown card token 404 with the provider code 20005', async () => {
      const read = await call('GET', '/v1/card/tokens/ctn_unknown');
      expect(read.statusCode).toBe(404);
      expect(read.json().upstream).toMatchObject({ status: 404, code: '20005' });
    });

    it('refuses the refund of a fully refunded payment with the provider code 40006', async () => {
      const paid = (await call('POST', '/v1/card/payments', { amount: 900, ...CARD })).json();
      expect((await call('POST', '/v1/card/refunds', { payment: paid.token })).statusCode).toBe(
        201,
      );
      const again = await call('POST', '/v1/card/refunds', { payment: paid.token });
      expect(again.statusCode).toBe(400);
      expect(again.json().upstream).toMatchObject({ status: 400, code: '40006' });
    });

    it("passes on the round-2 facts: a customer's cvvRequired, the customer a payment charged, a refunded fee of 0, installment children", async () => {
      const customer = await call('POST', '/v1/card/customers', {
        ...CARD,
        fullName: 'Ada Lovelace',
        email: 'ada@example.com',
      });
      expect(customer.statusCode).toBe(201);
      expect(customer.json()).toMatchObject({ cvvRequired: false, card: { cvvRequired: false } });
      const charged = await call('POST', '/v1/card/payments', {
        amount: 1500,
        token: customer.json().token,
      });
      expect(charged.statusCode).toBe(201);
      expect(charged.json().customer).toMatchObject({ token: customer.json().token });
      await call('POST', '/v1/card/refunds', { payment: charged.json().token });
      const refunded = await call('GET', `/v1/card/payments/${charged.json().token}`);
      expect(refunded.json()).toMatchObject({ status: 'Refunded', feeAmount: 0 });
      const split = await call('POST', '/v1/card/payments', {
        ...CARD,
        cardNumber: '4908440000000003',
        amount: 10480,
        installments: 3,
      });
      expect(split.statusCode).toBe(201);
      expect(split.json().installments[0]).toMatchObject({
        currency: 'EUR',
        status: 'Pending installment',
        amount: 3500,
      });
    });
  },
);
