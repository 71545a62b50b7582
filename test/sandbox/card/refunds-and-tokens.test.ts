import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';

type Refund = {
  token: string;
  status: string;
  amount: number;
  fee_amount: number;
  payment: string;
};
type Payment = {
  token: string;
  status: string;
  amount: number;
  fee_amount: number;
  refund_amount: number;
  refunded: boolean;
  refunds: Refund[];
};
type Token = {
  token: string;
  is_used: boolean;
  has_expired: boolean;
  amount?: number;
  card: { max_installments: number };
};
type List<T> = { total_count: number; items: T[] };

describe('sandbox card API: refunds', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const pay = async (amount: number, number?: string) =>
    (
      await client.call<Payment>('createPayment', {
        key: merchant.secretKey,
        form: { amount, ...cardFields(number) },
      })
    ).body;
  const refund = (form: Record<string, unknown>) =>
    client.call<Refund>('createRefund', { key: merchant.secretKey, form });
  const payment = async (paymentId: string) =>
    (
      await client.call<Payment>('retrievePayment', {
        key: merchant.secretKey,
        params: { paymentId },
      })
    ).body;

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant();
  });
  afterAll(() => client.close());

  it('adds partial refunds up until the payment is fully refunded, the fees refunded in proportion', async () => {
    const paid = await pay(10_000);
    expect(paid.fee_amount).toBe(170);
    const first = await refund({
      payment: paid.token,
      amount: 2_500,
      description: 'One item back',
    });
    expect(first.body).toMatchObject({
      status: 'Captured',
      amount: 2_500,
      fee_amount: 43,
      payment: paid.token,
    });
    expect(first.body.token).toMatch(/^ref_/);
    let now = await payment(paid.token);
    expect(now).toMatchObject({
      status: 'Partially Refunded',
      refund_amount: 2_500,
      refunded: false,
    });
    await refund({ payment: paid.token, amount: 2_500 });
    now = await payment(paid.token);
    expect(now).toMatchObject({
      status: 'Partially Refunded',
      refund_amount: 5_000,
      refunded: false,
    });
    const rest = await refund({ payment: paid.token });
    expect(rest.body.amount).toBe(5_000);
    now = await payment(paid.token);
    expect(now).toMatchObject({ status: 'Refunded', refund_amount: 10_000, refunded: true });
    expect(now.refunds.map((r) => r.amount)).toEqual([2_500, 2_500, 5_000]);
    expect(now.refunds.reduce((sum, r) => sum + r.fee_amount, 0)).toBe(paid.fee_amount);
    await client.refused(
      'createRefund',
      { key: merchant.secretKey, form: { payment: paid.token, amount: 1 } },
      400,
      40006,
    );
  });

  it('never refunds beyond the amount (40007), and an omitted amount is the remainder', async () => {
    const paid = await pay(1_000);
    await refund({ payment: paid.token, amount: 400 });
    const over = await client.refused(
      'createRefund',
      { key: merchant.secretKey, form: { payment: paid.token, amount: 601 } },
      400,
      40007,
    );
    expect(over.body.error.message).toBe(
      `Refund amount of 601 exceeds the remaining amount of payment ${paid.token}.`,
    );
    expect((await refund({ payment: paid.token })).body.amount).toBe(600);
  });

  it('refuses to refund a pre-authorisation (40015) and an unknown payment (404 40005)', async () => {
    const held = (
      await client.call<Payment>('createPayment', {
        key: merchant.secretKey,
        form: { amount: 500, capture: 0, ...cardFields() },
      })
    ).body;
    await client.refused(
      'createRefund',
      { key: merchant.secretKey, form: { payment: held.token } },
      400,
      40015,
    );
    await client.refused(
      'createRefund',
      { key: merchant.secretKey, form: { payment: 'pmt_unknown' } },
      404,
      40005,
    );
    await client.refused('createRefund', { key: merchant.secretKey, form: {} }, 400, 80002);
  });

  it('fails refunds of the refund-failing test cards with 502 and 500, recorded Failed and not applied', async () => {
    for (const [number, status, code] of [
      ['4916915111701144', 502, 40013],
      ['5206140271967502', 500, 99999],
    ] as const) {
      const paid = await pay(2_000, number);
      await client.refused(
        'createRefund',
        { key: merchant.secretKey, form: { payment: paid.token, amount: 500 } },
        status,
        code,
      );
      expect(await payment(paid.token)).toMatchObject({
        status: 'Captured',
        refund_amount: 0,
        refunds: [],
      });
      const listed = await client.call<List<Refund>>('listRefunds', {
        key: merchant.secretKey,
        query: { payment: paid.token },
      });
      expect(listed.body.items).toEqual([
        expect.objectContaining({ status: 'Failed', amount: 500, fee_amount: 0 }),
      ]);
    }
  });

  it('retrieves and lists refunds, of one payment with the payment filter', async () => {
    const paid = await pay(3_000);
    const made = await refund({ payment: paid.token, amount: 100, metadata: { reason: 'late' } });
    const read = await client.call<Refund>('retrieveRefund', {
      key: merchant.secretKey,
      params: { refundId: made.body.token },
    });
    expect(read.body).toEqual(made.body);
    const listed = await client.call<List<Refund>>('listRefunds', {
      key: merchant.secretKey,
      query: { payment: paid.token },
    });
    expect(listed.body.items.map((r) => r.token)).toEqual([made.body.token]);
    await client.refused(
      'retrieveRefund',
      { key: merchant.secretKey, params: { refundId: 'ref_unknown' } },
      404,
      50003,
    );
  });

  it('refunds at the path the public clients call, answering the payment', async () => {
    const paid = await pay(800);
    const made = await client.call<Record<string, unknown>>('refundPaymentAlias', {
      key: merchant.secretKey,
      params: { paymentId: paid.token },
      form: { amount: 300 },
    });
    expect(made.body).toMatchObject({
      token: paid.token,
      status: 'Partially Refunded',
      refund_amount: 300,
      refunds: [{ amount: 300, payment: paid.token }],
    });
  });

  it('lists payments by status: refunded covers full and partial, and by payment method', async () => {
    const shop = await client.merchant();
    const mk = async () =>
      (
        await client.call<Payment>('createPayment', {
          key: shop.secretKey,
          form: { amount: 1_000, ...cardFields() },
        })
      ).body;
    const untouched = await mk();
    const partly = await mk();
    const fully = await mk();
    await client.call('createRefund', {
      key: shop.secretKey,
      form: { payment: partly.token, amount: 10 },
    });
    await client.call('createRefund', { key: shop.secretKey, form: { payment: fully.token } });
    const tokens = async (query: Record<string, string>) =>
      (await client.call<List<Payment>>('listPayments', { key: shop.secretKey, query })).body.items
        .map((p) => p.token)
        .sort();
    expect(await tokens({ status: 'captured' })).toEqual([untouched.token]);
    expect(await tokens({ status: 'partially_refunded' })).toEqual([partly.token]);
    expect(await tokens({ status: 'fully_refunded' })).toEqual([fully.token]);
    expect(await tokens({ status: 'refunded' })).toEqual([partly.token, fully.token].sort());
    expect(await tokens({ payment_method: 'card' })).toHaveLength(3);
    expect(await tokens({ payment_method: 'card_present' })).toEqual([]);
    await client.refused(
      'listPayments',
      { key: shop.secretKey, query: { status: 'lost' } },
      400,
      80002,
    );
  });
});

describe('sandbox card API: card tokens', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const token = async (form: Record<string, unknown> = cardFields()) =>
    (await client.call<Token>('createCardToken', { key: merchant.publicKey, form })).body;

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant();
  });
  afterAll(() => client.close());

  it('pays once with a token; the second use is refused (20007)', async () => {
    const created = await token();
    expect(created).toMatchObject({ is_used: false, has_expired: false });
    await client.call('createPayment', {
      key: merchant.secretKey,
      form: { amount: 500, token: created.token },
    });
    const read = await client.call<Token>('retrieveCardToken', {
      key: merchant.secretKey,
      params: { tokenId: created.token },
    });
    expect(read.body.is_used).toBe(true);
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 500, token: created.token } },
      400,
      20007,
    );
  });

  it('expires a token after 15 minutes on the sandbox clock (20006)', async () => {
    const created = await token();
    await client.advanceClock(14 * 60 + 59);
    const fresh = await client.call<Token>('retrieveCardToken', {
      key: merchant.publicKey,
      params: { tokenId: created.token },
    });
    expect(fresh.body.has_expired).toBe(false);
    await client.advanceClock(1);
    const stale = await client.call<Token>('retrieveCardToken', {
      key: merchant.publicKey,
      params: { tokenId: created.token },
    });
    expect(stale.body.has_expired).toBe(true);
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 500, token: created.token } },
      400,
      20006,
    );
  });

  it('binds a token to an amount: another amount is refused (40029)', async () => {
    const bound = await token({ ...cardFields(), amount: 1_250 });
    expect(bound.amount).toBe(1_250);
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 1_000, token: bound.token } },
      400,
      40029,
    );
    const paid = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: { amount: 1_250, token: bound.token },
    });
    expect(paid.body.status).toBe('Captured');
  });

  it('checks max_installments against the token card, and only with a token', async () => {
    const plain = await token();
    expect(plain.card.max_installments).toBe(0);
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 900, token: plain.token, max_installments: 3 } },
      400,
      80002,
    );
    const instalments = await token(cardFields('4908440000000003'));
    expect(instalments.card.max_installments).toBe(36);
    const paid = await client.call<Payment & { installments_count: number }>('createPayment', {
      key: merchant.secretKey,
      form: { amount: 900, token: instalments.token, max_installments: 36, installments: 3 },
    });
    expect(paid.body.installments_count).toBe(3);
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 900, max_installments: 36, ...cardFields() } },
      400,
      80002,
    );
  });

  it('needs all five card arguments and a valid card for a token; an unknown token is 404 20005', async () => {
    const { cvv: _cvv, ...noCvv } = cardFields();
    await client.refused('createCardToken', { key: merchant.publicKey, form: noCvv }, 400, 20003);
    await client.refused(
      'createCardToken',
      { key: merchant.publicKey, form: cardFields('4556390755719396') },
      400,
      20000,
    );
    await client.refused(
      'retrieveCardToken',
      { key: merchant.publicKey, params: { tokenId: 'ctn_unknown' } },
      404,
      20005,
    );
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100, token: 'ctn_unknown' } },
      404,
      20005,
    );
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100, token: 'xyz_1' } },
      400,
      40001,
    );
  });

  it('a failed charge does not use up the token', async () => {
    const declined = await token(cardFields('4000000000009995'));
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 100, token: declined.token } },
      402,
      40004,
    );
    const read = await client.call<Token>('retrieveCardToken', {
      key: merchant.secretKey,
      params: { tokenId: declined.token },
    });
    expect(read.body.is_used).toBe(false);
  });
});
