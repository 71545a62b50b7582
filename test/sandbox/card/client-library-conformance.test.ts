import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardContract, type Merchant } from '../../support/card-api.js';
import { sellerForm } from '../../support/marketplace.js';

/**
 * The provider's card API as its official client libraries (PHP, Ruby) exercise it, stated fact by
 * fact (../shared/reference/card-provider-facts.md): each request is sent as such a library sends it
 * (form-encoded, nesting percent-encoded, Basic auth with the key and an empty password, the
 * libraries' paths), and each answer must be what the library reads and pass card.yaml, the contract
 * the gateway checks every provider answer against.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `http_build_query` as the PHP library uses it: nested keys percent-encoded, spaces as `+`. */
function httpBuildQuery(params: Json, prefix?: string): string[] {
  return Object.entries(params).flatMap(([name, value]) => {
    const key = prefix ? `${prefix}[${name}]` : name;
    if (value !== null && typeof value === 'object') return httpBuildQuery(value as Json, key);
    const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');
    return [`${encode(key)}=${encode(String(value))}`];
  });
}

const year = String(new Date().getUTCFullYear() + 3);
const card = (number: string) => ({
  card_number: number,
  expiration_month: '11',
  expiration_year: year,
  holder_name: 'John Doe',
  cvv: '123',
});

describe("the card sandbox as the provider's client libraries exercise it", () => {
  let client: CardSandboxClient;
  let merchant: Merchant;

  /** One library call: `operationId` names the card.yaml operation whose answer contract applies. */
  const lib = async (
    operationId: string,
    method: string,
    path: string,
    params?: Json,
    key = merchant.secretKey,
  ) => {
    const response = await client.raw<Json>(method, path, {
      key,
      ...(params ? { form: httpBuildQuery(params).join('&') } : {}),
    });
    const problems = cardContract.validateResponse(
      operationId,
      response.status,
      response.headers,
      response.body,
    );
    expect({ operationId, problems }).toEqual({ operationId, problems: [] });
    return response;
  };
  const ok = async (...args: Parameters<typeof lib>) => {
    const response = await lib(...args);
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body;
  };
  const pay = (params: Json) => ok('createPayment', 'POST', '/payments', params);
  const style = async (answerStyle: 'seed' | 'provider-clients') => {
    const set = await client.control('POST', '/sandbox/card/answer-style', {
      style: answerStyle,
      merchantId: merchant.merchantId,
    });
    expect(set).toMatchObject({ status: 200, body: { style: answerStyle, merchants: 1 } });
  };

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Client library merchant');
  });
  afterAll(() => client.close());

  it('1: PUT /payments/refund/{id} answers the payment after the refund; POST /refunds the refund', async () => {
    const paid = await pay({ amount: 1000, ...card('4556390755719395') });
    const partly = await ok('refundPaymentAlias', 'PUT', `/payments/refund/${paid.token}`, {
      amount: 400,
      description: 'Partial',
    });
    expect(partly).toMatchObject({
      token: paid.token,
      status: 'Partially Refunded',
      refunded: false,
      refund_amount: 400,
      refunds: [{ amount: 400, description: 'Partial', payment: paid.token }],
    });
    // No amount: the rest.
    const fully = await ok('refundPaymentAlias', 'PUT', `/payments/refund/${paid.token}`, {});
    expect(fully).toMatchObject({ status: 'Refunded', refunded: true, refund_amount: 1000 });
    expect(fully.refunds.map((refund: Json) => refund.amount)).toEqual([400, 600]);

    const other = await pay({ amount: 500, ...card('4556390755719395') });
    const refund = await ok('createRefund', 'POST', '/refunds', { payment: other.token });
    expect(refund).toMatchObject({ token: expect.stringMatching(/^ref_/), amount: 500 });
  });

  it('2: PUT /customers/{id} adds a card by token or by card fields, default_card=1 making it the default', async () => {
    const customer = await ok('createCustomer', 'POST', '/customers', {
      ...card('5217925525906273'),
      full_name: 'John Doe',
      email: 'john@example.com',
    });
    const first = customer.card.token as string;
    const token = await ok(
      'createCardToken',
      'POST',
      '/tokens',
      card('4111111111111111'),
      merchant.publicKey,
    );
    const byToken = await ok('updateCustomer', 'PUT', `/customers/${customer.token}`, {
      token: token.token,
    });
    expect(byToken).toMatchObject({ token: customer.token, card: { token: first } });
    expect(byToken.cards.count).toBe(2);
    expect(byToken.cards.data.map((c: Json) => c.last_four)).toContain('1111');

    const { cvv: _cvv, ...noCvv } = card('4242424242424242');
    const byFields = await ok('updateCustomer', 'PUT', `/customers/${customer.token}`, {
      ...noCvv,
      default_card: 1,
    });
    expect(byFields.cards.count).toBe(3);
    expect(byFields.card).toMatchObject({ last_four: '4242', customer: customer.token });

    const back = await ok('updateCustomer', 'PUT', `/customers/${customer.token}`, {
      card: first,
      default_card: 1,
    });
    expect(back.card.token).toBe(first);
  });

  it('3: a payment with create_customer=1 answers the customer it created', async () => {
    const paid = await pay({
      amount: 2000,
      ...card('5217925525906273'),
      payee_email: 'jane@example.com',
      create_customer: 1,
    });
    expect(paid.customer).toMatchObject({
      token: expect.stringMatching(/^cus_/),
      email: 'jane@example.com',
      full_name: 'John Doe',
      is_active: true,
      cards: { count: 1 },
    });
    expect(paid.card.customer).toBe(paid.customer.token);
    const stored = await ok('retrieveCustomer', 'GET', `/customers/${paid.customer.token}`);
    expect(stored.card.token).toBe(paid.customer.card.token);
  });

  it('4: a card token made with an amount is charged by token alone; another amount is 40029', async () => {
    const bound = await ok(
      'createCardToken',
      'POST',
      '/tokens',
      { ...card('4111111111111111'), amount: 1450 },
      merchant.publicKey,
    );
    const paid = await pay({ token: bound.token, description: 'Token alone' });
    expect(paid).toMatchObject({ amount: 1450, status: 'Captured' });

    const other = await ok(
      'createCardToken',
      'POST',
      '/tokens',
      { ...card('4111111111111111'), amount: 1450 },
      merchant.publicKey,
    );
    const refused = await lib('createPayment', 'POST', '/payments', {
      token: other.token,
      amount: 1500,
    });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 40029 } } });
    // An unbound token still needs an amount.
    const unbound = await ok(
      'createCardToken',
      'POST',
      '/tokens',
      card('4111111111111111'),
      merchant.publicKey,
    );
    const noAmount = await lib('createPayment', 'POST', '/payments', { token: unbound.token });
    expect(noAmount).toMatchObject({ status: 400, body: { error: { code: 40002 } } });
  });

  it("5: DELETE /customers/{id}/card/{card} answers the customer left; the seed's path keeps {token, is_deleted}", async () => {
    const customer = await ok('createCustomer', 'POST', '/customers', card('5217925525906273'));
    const { cvv: _cvv, ...second } = card('4111111111111111');
    const { cvv: _cvv2, ...third } = card('4242424242424242');
    const two = await ok('updateCustomer', 'PUT', `/customers/${customer.token}`, second);
    await ok('updateCustomer', 'PUT', `/customers/${customer.token}`, third);
    const added = (two.cards.data as Json[]).find((c) => c.last_four === '1111')!;
    const left = await ok(
      'deleteCustomerCardAlias',
      'DELETE',
      `/customers/${customer.token}/card/${added.token}`,
    );
    expect(left).toMatchObject({ token: customer.token, cards: { count: 2 } });
    expect(left.cards.data.map((c: Json) => c.token)).not.toContain(added.token);

    const seed = await ok(
      'deleteCustomerCard',
      'DELETE',
      `/customers/${customer.token}/cards/${customer.card.token}`,
    );
    expect(seed).toEqual({ token: customer.card.token, is_deleted: true });
  });

  it("6: 4000000000000002 pre-authorises and is captured at the clients' path; 4000000000009995 is declined", async () => {
    const held = await pay({ amount: 1000, ...card('4000000000000002'), capture: 0 });
    expect(held.status).toBe('Pre Authorized');
    const captured = await ok('capturePaymentAlias', 'PUT', `/payments/capture/${held.token}`);
    expect(captured.status).toBe('Captured');

    const declined = await lib('createPayment', 'POST', '/payments', {
      amount: 1000,
      ...card('4000000000009995'),
    });
    expect(declined).toMatchObject({ status: 402, body: { error: { code: 40004 } } });
  });

  it('7: an installment payment carries its child payments, split 3500/3500/3480 for 10480 over three', async () => {
    const paid = await pay({ amount: 10480, installments: 3, ...card('4908440000000003') });
    expect(paid.installments_count).toBe(3);
    const children = paid.installments as Json[];
    expect(children.map((child) => child.amount)).toEqual([3500, 3500, 3480]);
    expect(children.map((child) => child.status)).toEqual(Array(3).fill('Pending installment'));
    const tokens = children.map((child) => child.token as string);
    expect(tokens).toEqual(Array(3).fill(expect.stringMatching(/^pmt_/)));
    expect(tokens).not.toContain(paid.token);
    expect(new Set(tokens).size).toBe(3);
    expect(children.reduce((sum, child) => sum + child.fee_amount, 0)).toBe(paid.fee_amount);
    const months = children.map((child) => Number(child.due_date.slice(5, 7)));
    expect(months.map((month) => (month - months[0] + 12) % 12)).toEqual([0, 1, 2]);
    // The first falls due the next day; each child carries the payment's date and currency.
    const day = (stamp: string) => Date.parse(`${stamp.slice(0, 10)}T00:00:00Z`);
    expect(day(children[0].due_date) - day(paid.date_created)).toBe(86_400_000);
    for (const child of children)
      expect(child).toMatchObject({ date_created: paid.date_created, currency: 'EUR' });

    // When the first falls due it is captured; the others wait.
    await client.advanceClock(2 * 86_400);
    const later = await ok('retrievePayment', 'GET', `/payments/${paid.token}`);
    expect(later.installments.map((child: Json) => child.status)).toEqual([
      'Captured',
      'Pending installment',
      'Pending installment',
    ]);
  });

  it("8: in the clients' answer style the sandbox spells as their fixtures do, and both spellings pass the contract", async () => {
    const notificationForm = {
      payee_name: 'John Doe',
      payee_email: 'john@example.com',
      payee_phone: '+306900000001',
      amount: 2500,
      description: 'Invoice 7',
    };
    const spellings = async () => {
      const held = await pay({ amount: 1000, ...card('5217925525906273'), capture: 0 });
      const notification = await ok(
        'createNotification',
        'POST',
        '/notifications',
        notificationForm,
      );
      const unknownToken = await lib(
        'retrieveCardToken',
        'GET',
        '/tokens/ctn_unknown',
        undefined,
        merchant.publicKey,
      );
      const paid = await pay({ amount: 1000, ...card('5217925525906273') });
      await ok('refundPaymentAlias', 'PUT', `/payments/refund/${paid.token}`, {});
      const again = await lib('refundPaymentAlias', 'PUT', `/payments/refund/${paid.token}`, {});
      return {
        payment: held.status,
        notification: notification.status,
        unknownToken: [unknownToken.status, unknownToken.body.error.code],
        refundedAgain: [again.status, again.body.error.code],
      };
    };
    expect(await spellings()).toEqual({
      payment: 'Pre Authorized',
      notification: 'Pending',
      unknownToken: [404, 20005],
      refundedAgain: [400, 40006],
    });
    await style('provider-clients');
    try {
      expect(await spellings()).toEqual({
        payment: 'Pre authorized',
        notification: 'Awaiting',
        unknownToken: [400, 20005],
        refundedAgain: [400, 40015],
      });
    } finally {
      await style('seed');
    }
  });

  it('10: customers and each of their cards carry cvv_required false, also after PUT adds a card', async () => {
    const customer = await ok('createCustomer', 'POST', '/customers', {
      ...card('5217925525906273'),
      email: 'jane@example.com',
    });
    const added = await ok('updateCustomer', 'PUT', `/customers/${customer.token}`, {
      ...card('4242424242424242'),
      default_card: 1,
    });
    expect(added.cvv_required).toBe(false);
    expect(added.card.cvv_required).toBe(false);
    expect(added.cards.count).toBe(2);
    expect(added.cards.data.map((entry: Json) => entry.cvv_required)).toEqual([false, false]);
    const read = await ok('retrieveCustomer', 'GET', `/customers/${customer.token}`);
    expect(read.cvv_required).toBe(false);
  });

  it('11: a payment charged with token=cus_… answers that customer', async () => {
    const customer = await ok('createCustomer', 'POST', '/customers', {
      ...card('5217925525906273'),
      full_name: 'Jane Roe',
      email: 'jane@example.com',
      description: 'Loyal',
    });
    const paid = await pay({ amount: 1500, token: customer.token });
    expect(paid.customer).toMatchObject({
      token: customer.token,
      full_name: 'Jane Roe',
      email: 'jane@example.com',
      description: 'Loyal',
      is_active: true,
      date_created: customer.date_created,
      date_modified: expect.any(String),
      card: { token: customer.card.token },
    });
    expect(paid.card.customer).toBe(customer.token);
    // A payment from card fields answers none.
    expect(await pay({ amount: 1500, ...card('5217925525906273') })).not.toHaveProperty('customer');
  });

  it('12: a fully refunded payment reads fee_amount 0 (the refund carries the fee); a partial refund leaves part of it', async () => {
    const paid = await pay({ amount: 10_000, ...card('5217925525906273') });
    expect(paid.fee_amount).toBe(170);
    const partial = await ok('refundPaymentAlias', 'PUT', `/payments/refund/${paid.token}`, {
      amount: 4_000,
    });
    expect(partial).toMatchObject({ status: 'Partially Refunded', refunded: false });
    expect(partial.refunds[0].fee_amount).toBe(68);
    expect(partial.fee_amount).toBe(102);
    const full = await ok('refundPaymentAlias', 'PUT', `/payments/refund/${paid.token}`, {});
    expect(full).toMatchObject({ status: 'Refunded', refunded: true, fee_amount: 0 });
    expect(full.refunds.map((refund: Json) => refund.fee_amount)).toEqual([68, 102]);
    const voided = await pay({ amount: 2_000, ...card('5217925525906273') });
    const byRefund = await ok('refundPaymentAlias', 'PUT', `/payments/refund/${voided.token}`, {});
    expect(byRefund.fee_amount).toBe(0);
    expect((await ok('retrievePayment', 'GET', `/payments/${voided.token}`)).fee_amount).toBe(0);
  });

  it('13: POST /customers with no parameters is refused 400 20001', async () => {
    const refused = await lib('createCustomer', 'POST', '/customers', {});
    expect(refused).toMatchObject({ status: 400, body: { error: { status: 400, code: 20001 } } });
    const bare = await client.raw<Json>('POST', '/customers', { key: merchant.secretKey });
    expect(bare).toMatchObject({ status: 400, body: { error: { code: 20001 } } });
  });

  it('9: GET /sellers/{id}/balance/ (trailing slash) answers as the path without it', async () => {
    const seller = await ok('createSeller', 'POST', '/sellers', sellerForm(7));
    const plain = await ok('retrieveSellerBalance', 'GET', `/sellers/${seller.token}/balance`);
    const slashed = await ok('retrieveSellerBalance', 'GET', `/sellers/${seller.token}/balance/`);
    expect(slashed).toEqual(plain);
    const unknown = await lib('retrieveSellerBalance', 'GET', '/sellers/sel_unknown/balance/');
    expect(unknown.status).toBe(404);
  });
});
