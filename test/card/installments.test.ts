import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const INSTALLMENTS_CARD = {
  cardNumber: '4908440000000003',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};

interface Child {
  token: string;
  status: string;
  amount: number;
  feeAmount: number;
  dueDate: string;
}

describe("an installment payment's child payments, readable by their own pmt_ id", () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  let other: { tenantId: string; key: string };
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
    other = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const get = (id: string, key = app.key) =>
    sut.app.inject({ method: 'GET', url: `/v1/card/payments/${id}`, headers: bearer(key) });

  it('answers a child as a payment with its parent, its due date and its status, and only to its tenant', async () => {
    const created = await sut.app.inject({
      method: 'POST',
      url: '/v1/card/payments',
      headers: bearer(app.key),
      payload: { amount: 10480, installments: 3, description: 'Sofa', ...INSTALLMENTS_CARD },
    });
    expect(created.statusCode).toBe(201);
    const parent = created.json<{ token: string; installments: Child[] }>();
    expect(parent.installments.map((part) => part.amount)).toEqual([3500, 3500, 3480]);

    const [first, , last] = parent.installments;
    const read = await get(last.token);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      token: last.token,
      parentPayment: parent.token,
      status: 'Pending installment',
      amount: 3480,
      feeAmount: last.feeAmount,
      dueDate: last.dueDate,
      dateCreated: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      description: 'Sofa',
      currency: 'EUR',
      card: { lastFour: '0003' },
      installmentsCount: 0,
      refunds: [],
    });

    // Once its due date is reached the child is Captured, as its parent's list shows it.
    sut.sandbox.card.advanceClock(2 * 86_400);
    expect((await get(first.token)).json()).toMatchObject({
      token: first.token,
      status: 'Captured',
      parentPayment: parent.token,
    });

    const elsewhere = await get(last.token, other.key);
    expect(elsewhere.statusCode).toBe(404);
  });

  it('still answers 404 for a pmt_ id that is nobody’s payment nor child', async () => {
    const unknown = await get('pmt_notachildofanyone');
    expect(unknown.statusCode).toBe(404);
  });
});
