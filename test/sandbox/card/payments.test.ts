import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';

type Payment = Record<string, unknown> & {
  token: string;
  status: string;
  amount: number;
  card: Record<string, unknown>;
};

describe('sandbox card API: payments', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const pay = (form: Record<string, unknown>) =>
    client.call<Payment>('createPayment', { key: merchant.secretKey, form });

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Payments shop');
  });
  afterAll(() => client.close());

  it('captures a card payment at once by default (capture=1), with the amount in cents and a masked card', async () => {
    const { status, body } = await pay({
      amount: 1099,
      description: 'Two coffees',
      ...cardFields(),
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'Captured',
      amount: 1099,
      currency: 'EUR',
      refund_amount: 0,
      refunded: false,
      description: 'Two coffees',
      fee_amount: 36,
      card: { bin: '521792', last_four: '6273', type: 'MasterCard', status: 'valid' },
    });
    expect(body.token).toMatch(/^pmt_/);
    expect(body.card.token).toMatch(/^crd_/);
    expect(JSON.stringify(body)).not.toContain('5217925525906273');
    expect(body.date_created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0000$/);
  });

  it('only pre-authorises with capture=0, and captures it in a second step', async () => {
    const held = await pay({ amount: 5000, capture: 0, ...cardFields() });
    expect(held.body.status).toBe('Pre Authorized');
    const captured = await client.call<Payment>('capturePayment', {
      key: merchant.secretKey,
      params: { paymentId: held.body.token },
    });
    expect(captured.body).toMatchObject({ token: held.body.token, status: 'Captured' });
    await client.refused(
      'capturePayment',
      { key: merchant.secretKey, params: { paymentId: held.body.token } },
      400,
      40023,
    );
  });

  it('accepts the capture at the path the public clients call', async () => {
    const held = await pay({ amount: 700, capture: 0, ...cardFields() });
    const captured = await client.call<Payment>('capturePaymentAlias', {
      key: merchant.secretKey,
      params: { paymentId: held.body.token },
    });
    expect(captured.body.status).toBe('Captured');
  });

  it('cancels a pre-authorisation not captured within 7 days (sandbox clock)', async () => {
    const other = await CardSandboxClient.start();
    try {
      const shop = await other.merchant();
      const held = await other.call<Payment>('createPayment', {
        key: shop.secretKey,
        form: { amount: 900, capture: 0, ...cardFields() },
      });
      await other.advanceClock(7 * 86_400 - 60);
      const still = await other.call<Payment>('retrievePayment', {
        key: shop.secretKey,
        params: { paymentId: held.body.token },
      });
      expect(still.body.status).toBe('Pre Authorized');
      await other.advanceClock(60);
      const cancelled = await other.call<Payment>('retrievePayment', {
        key: shop.secretKey,
        params: { paymentId: held.body.token },
      });
      expect(cancelled.body.status).toBe('Canceled');
      await other.refused(
        'capturePayment',
        { key: shop.secretKey, params: { paymentId: held.body.token } },
        400,
        40023,
      );
    } finally {
      await other.close();
    }
  });

  it('refuses a second payment with the same merchant_ref (409 40025) and finds the first by it', async () => {
    const ref = `order-${Date.now()}`;
    const first = await pay({ amount: 1500, merchant_ref: ref, ...cardFields() });
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 1500, merchant_ref: ref, ...cardFields() } },
      409,
      40025,
    );
    const found = await client.call<{ total_count: number; items: Payment[] }>('listPayments', {
      key: merchant.secretKey,
      query: { merchant_ref: ref },
    });
    expect(found.body.total_count).toBe(1);
    expect(found.body.items[0].token).toBe(first.body.token);
  });

  it('takes a merchant_ref of 120 characters and refuses one of 121', async () => {
    await pay({ amount: 100, merchant_ref: 'r'.repeat(120), ...cardFields() });
    await client.refused(
      'createPayment',
      {
        key: merchant.secretKey,
        form: { amount: 100, merchant_ref: 'x'.repeat(121), ...cardFields() },
      },
      400,
      80002,
    );
  });

  it('refuses amounts below 30 cents or missing (40002)', async () => {
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 29, ...cardFields() } },
      400,
      40002,
    );
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: cardFields() },
      400,
      40002,
    );
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: '10.99', ...cardFields() } },
      400,
      40002,
    );
  });

  it('refuses a card number failing the Luhn check (20000) and bad expiry, cvv and holder', async () => {
    const refused = (fields: Record<string, string>, code: number) =>
      client.refused(
        'createPayment',
        { key: merchant.secretKey, form: { amount: 100, ...cardFields(), ...fields } },
        400,
        code,
      );
    await refused({ card_number: '4111111111111112' }, 20000);
    await refused({ card_number: '4111 1111 1111 1111' }, 20000);
    await refused({ expiration_year: '2001' }, 20001);
    await refused({ expiration_month: '15' }, 20002);
    await refused({ cvv: '12' }, 20003);
    await refused({ holder_name: '' }, 20008);
    const { cvv: _cvv, ...withoutCvv } = cardFields();
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100, ...withoutCvv } },
      400,
      20003,
    );
  });

  it('behaves as the test cards say: decline 402, 500 and 502, none creating a payment', async () => {
    const ref = `failing-${Date.now()}`;
    const attempt = (number: string, status: number, code: number) =>
      client.refused(
        'createPayment',
        {
          key: merchant.secretKey,
          form: { amount: 100, merchant_ref: ref, ...cardFields(number) },
        },
        status,
        code,
      );
    await attempt('4000000000009995', 402, 40004);
    await attempt('4888137257116730', 500, 99999);
    await attempt('4853451426120387', 502, 40013);
    const found = await client.call<{ total_count: number }>('listPayments', {
      key: merchant.secretKey,
      query: { merchant_ref: ref },
    });
    expect(found.body.total_count).toBe(0);
    for (const number of [
      '4556390755719395',
      '4111111111111111',
      '4242424242424242',
      '4916915111701144',
      '5206140271967502',
    ])
      expect((await pay({ amount: 100, ...cardFields(number) })).body.status).toBe('Captured');
  });

  it('splits installments only on the installments card, at most 36', async () => {
    const split = await pay({ amount: 10480, installments: 3, ...cardFields('4908440000000003') });
    expect(split.body).toMatchObject({ installments_count: 3 });
    expect((split.body.installments as { amount: number }[]).map((part) => part.amount)).toEqual([
      3500, 3500, 3480,
    ]);
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 1000, installments: 3, ...cardFields() } },
      400,
      80002,
    );
    await client.refused(
      'createPayment',
      {
        key: merchant.secretKey,
        form: { amount: 1000, installments: 37, ...cardFields('4908440000000003') },
      },
      400,
      80002,
    );
  });

  it('updates description and metadata; an empty metadata unsets all of it', async () => {
    const created = await pay({
      amount: 300,
      metadata: { order: '17', channel: 'web' },
      ...cardFields(),
    });
    expect(created.body.metadata).toEqual({ order: '17', channel: 'web' });
    const params = { paymentId: created.body.token };
    const renamed = await client.call<Payment>('updatePayment', {
      key: merchant.secretKey,
      params,
      form: { description: 'Renamed' },
    });
    expect(renamed.body).toMatchObject({
      description: 'Renamed',
      metadata: { order: '17', channel: 'web' },
    });
    const replaced = await client.call<Payment>('updatePayment', {
      key: merchant.secretKey,
      params,
      form: { metadata: { order: '18' } },
    });
    expect(replaced.body.metadata).toEqual({ order: '18' });
    const cleared = await client.call<Payment>('updatePayment', {
      key: merchant.secretKey,
      params,
      form: 'metadata=',
    });
    expect(cleared.body).toMatchObject({ description: 'Renamed', metadata: {} });
  });

  it('holds metadata to 20 keys, keys of 40 and values of 200 characters', async () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']));
    await pay({ amount: 100, metadata: many, ...cardFields() });
    const refused = (metadata: Record<string, string>) =>
      client.refused(
        'createPayment',
        { key: merchant.secretKey, form: { amount: 100, metadata, ...cardFields() } },
        400,
        80002,
      );
    await refused({ ...many, k20: 'v' });
    await refused({ ['k'.repeat(41)]: 'v' });
    await refused({ key: 'v'.repeat(201) });
    await pay({ amount: 100, metadata: { ['k'.repeat(40)]: 'v'.repeat(200) }, ...cardFields() });
  });

  it('records a marketplace split and associates a branch', async () => {
    const branches = await client.call<{ items: { token: string }[] }>('listBranches', {
      key: merchant.secretKey,
    });
    const branch = branches.body.items[0].token;
    const created = await pay({ amount: 2500, split: 1, branch_token: branch, ...cardFields() });
    expect(created.body).toMatchObject({
      split: true,
      branch_token: branch,
      transfer_amount: 0,
      transfers: [],
    });
    expect((await pay({ amount: 2500, ...cardFields() })).body).toMatchObject({
      split: false,
      branch_token: '',
    });
    await client.refused(
      'createPayment',
      {
        key: merchant.secretKey,
        form: { amount: 100, branch_token: 'brc_unknown', ...cardFields() },
      },
      404,
      10002,
    );
  });

  it('refuses a payment with both card fields and a token, or neither (40001), and an unknown parameter (80001)', async () => {
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100, token: 'ctn_x', ...cardFields() } },
      400,
      40001,
    );
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100 } },
      400,
      40001,
    );
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100, colour: 'red', ...cardFields() } },
      400,
      80001,
    );
  });

  it('answers an unknown payment 404 40005', async () => {
    await client.refused(
      'retrievePayment',
      { key: merchant.secretKey, params: { paymentId: 'pmt_nothere' } },
      404,
      40005,
    );
  });
});
