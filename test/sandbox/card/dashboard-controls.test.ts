import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';

type Payment = {
  token: string;
  status: string;
  amount: number;
  fee_amount: number;
  refund_amount: number;
  merchant_ref: string | null;
};
type List<T> = { total_count: number; items: T[] };

/**
 * What a merchant does in the provider's dashboard, outside any API client: a payment, a refund, a
 * corrected amount, a pre-authorisation left to lapse; each seen by the API as the provider's own.
 */
describe("sandbox dashboard controls: acting at the provider outside the merchant's API client", () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const dashboard = (path: string, body: object) =>
    client.control('POST', `/sandbox/card/merchants/${merchant.merchantId}/dashboard${path}`, body);
  const calls = async () =>
    (await client.control('GET', '/sandbox/calls')).body as Record<string, number>;
  const payment = async (token: string) =>
    (
      await client.call<Payment>('retrievePayment', {
        key: merchant.secretKey,
        params: { paymentId: token },
      })
    ).body;

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Dashboard shop');
  });
  afterAll(() => client.close());

  it('makes a payment the API lists, without counting an API call', async () => {
    const before = (await calls()).createPayment ?? 0;
    const made = await dashboard('/payments', { amount: 2_500, merchantRef: 'desk-1' });
    expect(made.status).toBe(200);
    const body = made.body as Payment;
    expect(body).toMatchObject({ status: 'Captured', amount: 2_500, merchant_ref: 'desk-1' });
    expect((await calls()).createPayment ?? 0).toBe(before);
    const listed = await client.call<List<Payment>>('listPayments', {
      key: merchant.secretKey,
      query: { merchant_ref: 'desk-1' },
    });
    expect(listed.body.items.map((item) => item.token)).toEqual([body.token]);
  });

  it('refunds a payment made through the API, which then reads Partially Refunded', async () => {
    const made = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: { amount: 4_000, ...cardFields() },
    });
    const refunded = await dashboard('/refunds', { payment: made.body.token, amount: 1_000 });
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({ status: 'Captured', amount: 1_000 });
    expect(await payment(made.body.token)).toMatchObject({
      status: 'Partially Refunded',
      refund_amount: 1_000,
    });
    const over = await dashboard('/refunds', { payment: made.body.token, amount: 3_001 });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ error: { status: 400, code: 40007 } });
  });

  it('corrects an amount, its fee following, and refuses one below what was refunded', async () => {
    const made = (await dashboard('/payments', { amount: 1_000 })).body as Payment;
    const changed = await dashboard(`/payments/${made.token}/amount`, { amount: 1_200 });
    expect(changed.status).toBe(200);
    expect(await payment(made.token)).toMatchObject({ amount: 1_200, fee_amount: 38 });
    await dashboard('/refunds', { payment: made.token, amount: 500 });
    expect((await dashboard(`/payments/${made.token}/amount`, { amount: 400 })).status).toBe(400);
    expect((await dashboard(`/payments/pmt_none/amount`, { amount: 400 })).status).toBe(404);
  });

  it('lets a pre-authorisation lapse with the clock: Canceled once 7 days have passed', async () => {
    const held = (await dashboard('/payments', { amount: 900, capture: false })).body as Payment;
    expect(held.status).toBe('Pre Authorized');
    await client.advanceClock(7 * 86_400);
    expect((await payment(held.token)).status).toBe('Canceled');
  });

  it('refuses a bad amount, a missing payment and an unknown merchant', async () => {
    expect((await dashboard('/payments', { amount: 10 })).status).toBe(400);
    expect((await dashboard('/refunds', {})).status).toBe(400);
    const unknown = await client.control(
      'POST',
      '/sandbox/card/merchants/mer_none/dashboard/payments',
      { amount: 100 },
    );
    expect(unknown.status).toBe(404);
  });

  it('makes any other write of card.yaml in the dashboard: a customer made and deleted, the API seeing both', async () => {
    const before = await calls();
    const made = await dashboard('/operations/createCustomer', {
      body: { ...cardFields(), full_name: 'Desk Customer' },
    });
    expect(made.status).toBe(200);
    const customer = made.body as { token: string; is_active: boolean };
    expect(customer).toMatchObject({ token: expect.stringMatching(/^cus_/), is_active: true });
    const deleted = await dashboard('/operations/deleteCustomer', {
      params: { customerId: customer.token },
    });
    expect(deleted.status).toBe(200);
    const read = await client.call<{ is_active: boolean }>('retrieveCustomer', {
      key: merchant.secretKey,
      params: { customerId: customer.token },
    });
    expect(read.body.is_active).toBe(false);
    const after = await calls();
    expect([after.createCustomer ?? 0, after.deleteCustomer ?? 0]).toEqual([
      before.createCustomer ?? 0,
      before.deleteCustomer ?? 0,
    ]);
    // The API's refusals as the API gives them; a read or an unknown operation is no dashboard write.
    const again = await dashboard('/operations/deleteCustomer', {
      params: { customerId: customer.token },
    });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.body).toMatchObject({ error: { status: again.status } });
    expect((await dashboard('/operations/listPayments', {})).status).toBe(404);
    expect((await dashboard('/operations/noSuchOperation', {})).status).toBe(404);
    expect((await dashboard('/operations/createCustomer', { body: 'x' })).status).toBe(400);
  });
});
