import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields } from '../../support/card-api.js';
import { Marketplace } from '../../support/marketplace.js';

describe('sandbox marketplace: split payments and direct transfers (the seed rules)', () => {
  let client: CardSandboxClient;
  let sut: Marketplace;
  let seller: string;
  beforeAll(async () => {
    client = await CardSandboxClient.start();
  });
  beforeEach(async () => {
    sut = await Marketplace.open(client);
    seller = (await sut.seller(1)).token as string;
  });
  afterAll(() => client.close());

  it('splits a captured split payment: seller gets amount less commission, marketplace keeps it', async () => {
    const paid = await sut.payment(10_000);
    expect(await sut.balance()).toEqual({ available_amount: 0, current_amount: 10_000 });
    const transfer = await sut.transfer(paid.token, {
      seller,
      amount: 6_000,
      commission_amount: 600,
    });
    expect(transfer).toMatchObject({
      token: expect.stringMatching(/^tra_/),
      type: 'payment',
      payment: paid.token,
      seller,
      amount: 6_000,
      commission_amount: 600,
      additional_amount: 0,
      on_hold: false,
      payout: null,
      is_reversed: false,
      reversals: [],
    });
    expect(await sut.balance()).toEqual({ available_amount: 600, current_amount: 4_000 });
    expect(await sut.sellerBalance(seller)).toBe(5_400);
    const payment = await sut.ok('retrievePayment', { params: { paymentId: paid.token } });
    expect(payment).toMatchObject({
      transfer_amount: 6_000,
      transfers: [{ token: transfer.token }],
    });
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('rule 1: refuses to split a Pre Authorized payment, and splits it once captured', async () => {
    const pre = await sut.payment(5_000, { capture: 0 });
    const error = await sut.refused(
      'createPaymentTransfer',
      {
        params: { paymentId: pre.token },
        form: { seller, amount: 1_000, commission_amount: 0, description: 'x' },
      },
      400,
      60010,
    );
    expect(error.message).toContain('Pre Authorized');
    expect(await sut.balance()).toEqual({ available_amount: 0, current_amount: 0 });
    await sut.ok('capturePayment', { params: { paymentId: pre.token } });
    expect((await sut.balance()).current_amount).toBe(5_000);
    await sut.transfer(pre.token, { seller, amount: 1_000, commission_amount: 0 });
  });

  it('rule 2: refuses to split a payment with installments', async () => {
    const paid = await sut.ok('createPayment', {
      form: { amount: 9_000, split: 1, installments: 3, ...cardFields('4908440000000003') },
    });
    await sut.refused(
      'createPaymentTransfer',
      {
        params: { paymentId: paid.token },
        form: { seller, amount: 1_000, commission_amount: 0, description: 'x' },
      },
      400,
      60011,
    );
  });

  it('rule 3: refuses to split after a full refund, and refunds only what transfers left (40017)', async () => {
    const paid = await sut.payment(4_000);
    await sut.transfer(paid.token, { seller, amount: 1_000, commission_amount: 100 });
    await sut.refused('createRefund', { form: { payment: paid.token } }, 400, 40017);
    await sut.ok('createRefund', { form: { payment: paid.token, amount: 3_000 } });
    expect(await sut.balance()).toEqual({ available_amount: 100, current_amount: 0 });

    const other = await sut.payment(2_000);
    await sut.ok('createRefund', { form: { payment: other.token } });
    await sut.refused(
      'createPaymentTransfer',
      {
        params: { paymentId: other.token },
        form: { seller, amount: 500, commission_amount: 0, description: 'x' },
      },
      400,
      40006,
    );
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('rule 4: refuses to split a payment not created with split=1', async () => {
    const plain = await sut.payment(3_000, { split: 0 });
    await sut.refused(
      'createPaymentTransfer',
      {
        params: { paymentId: plain.token },
        form: { seller, amount: 1_000, commission_amount: 0, description: 'x' },
      },
      400,
      60012,
    );
    expect((await sut.balance()).current_amount).toBe(0);
  });

  it('rule 5: refuses a commission that is not less than the amount', async () => {
    const paid = await sut.payment(3_000);
    await sut.refused(
      'createPaymentTransfer',
      {
        params: { paymentId: paid.token },
        form: { seller, amount: 1_000, commission_amount: 1_000, description: 'x' },
      },
      400,
      60013,
    );
    await sut.transfer(paid.token, { seller, amount: 1_000, commission_amount: 999 });
  });

  it('rule 6: above the remaining amount only with the account option, the excess from the available balance', async () => {
    const paid = await sut.payment(2_000);
    const form = { seller, amount: 2_500, commission_amount: 0, description: 'x' };
    await sut.refused(
      'createPaymentTransfer',
      { params: { paymentId: paid.token }, form },
      400,
      60015,
    );
    await sut.option(true);
    // The option on, the marketplace's available balance (0) cannot give the 500 above.
    await sut.refused(
      'createPaymentTransfer',
      { params: { paymentId: paid.token }, form },
      400,
      60014,
    );
    // Commissions of another payment fund it.
    const other = await sut.payment(10_000);
    await sut.transfer(other.token, { seller, amount: 10_000, commission_amount: 800 });
    const above = await sut.transfer(paid.token, { seller, amount: 2_500, commission_amount: 100 });
    expect(above).toMatchObject({ amount: 2_500, additional_amount: 500 });
    expect(await sut.balance()).toEqual({ available_amount: 400, current_amount: 0 });
    expect(await sut.sellerBalance(seller)).toBe(9_200 + 2_400);
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('rule 7: a transfer on hold is not paid out until released', async () => {
    const paid = await sut.payment(5_000);
    const held = await sut.transfer(paid.token, {
      seller,
      amount: 3_000,
      commission_amount: 300,
      on_hold: 1,
    });
    expect(held.on_hold).toBe(true);
    expect(await sut.sellerBalance(seller)).toBe(0);
    const today = (await client.control('GET', '/sandbox/card/clock')).body as { now: string };
    expect((await sut.runPayouts(today.now.slice(0, 10))).created).toEqual([]);
    const released = await sut.ok('updateTransfer', {
      params: { transferId: held.token },
      form: { on_hold: 0 },
    });
    expect(released.on_hold).toBe(false);
    expect(await sut.sellerBalance(seller)).toBe(2_700);
  });

  it('reverses a transfer on hold at once, from its held funds; releasing it pays out what is left', async () => {
    const paid = await sut.payment(5_000);
    const held = await sut.transfer(paid.token, {
      seller,
      amount: 3_000,
      commission_amount: 300,
      on_hold: 1,
    });
    expect(await sut.sellerBalance(seller)).toBe(0);
    const partial = await sut.ok('createReversal', {
      form: { transfer: held.token, amount: 1_000 },
    });
    expect(partial).toMatchObject({ amount: 1_000, commission_amount: 100 });
    expect(await sut.sellerBalance(seller)).toBe(0);
    expect((await sut.invariants()).violations).toEqual([]);
    const today = (await client.control('GET', '/sandbox/card/clock')).body as { now: string };
    expect((await sut.runPayouts(today.now.slice(0, 10))).created).toEqual([]);
    await sut.ok('updateTransfer', { params: { transferId: held.token }, form: { on_hold: 0 } });
    expect(await sut.sellerBalance(seller)).toBe(2_700 - 900);
    expect((await sut.invariants()).violations).toEqual([]);
    const again = await sut.transfer(paid.token, {
      seller,
      amount: 1_000,
      commission_amount: 0,
      on_hold: 1,
    });
    const full = await sut.ok('createReversal', { form: { transfer: again.token } });
    expect(full).toMatchObject({ amount: 1_000 });
    expect(await sut.ok('retrieveTransfer', { params: { transferId: again.token } })).toMatchObject(
      { is_reversed: true, on_hold: true },
    );
    expect(await sut.sellerBalance(seller)).toBe(1_800);
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('refuses a transfer to a seller that is not Authorized, and an unknown seller or payment', async () => {
    const paid = await sut.payment(3_000);
    await sut.sellerStatus(seller, 'Suspended');
    const form = { seller, amount: 1_000, commission_amount: 0, description: 'x' };
    await sut.refused(
      'createPaymentTransfer',
      { params: { paymentId: paid.token }, form },
      400,
      60016,
    );
    await sut.refused(
      'createPaymentTransfer',
      { params: { paymentId: paid.token }, form: { ...form, seller: 'sel_nobody' } },
      404,
      60001,
    );
    await sut.refused(
      'createPaymentTransfer',
      { params: { paymentId: 'pmt_nothing' }, form },
      404,
      40005,
    );
  });

  it('moves funds directly: credit from the available balance, debit from the seller', async () => {
    await sut.refused(
      'createSellerTransfer',
      { params: { sellerId: seller }, form: { type: 'credit', amount: 1, description: 'x' } },
      400,
      60014,
    );
    const paid = await sut.payment(10_000);
    await sut.transfer(paid.token, { seller, amount: 10_000, commission_amount: 1_000 });
    const credit = await sut.direct(seller, 'credit', 400);
    expect(credit).toMatchObject({
      type: 'credit',
      payment: null,
      commission_amount: 0,
      amount: 400,
    });
    expect(await sut.balance()).toEqual({ available_amount: 600, current_amount: 0 });
    await sut.refused(
      'createSellerTransfer',
      { params: { sellerId: seller }, form: { type: 'debit', amount: 9_401, description: 'x' } },
      400,
      60017,
    );
    await sut.direct(seller, 'debit', 9_400);
    expect(await sut.sellerBalance(seller)).toBe(0);
    expect(await sut.balance()).toEqual({ available_amount: 10_000, current_amount: 0 });
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('refuses to hold a direct transfer or one already paid out', async () => {
    const paid = await sut.payment(5_000);
    const transfer = await sut.transfer(paid.token, {
      seller,
      amount: 2_000,
      commission_amount: 200,
    });
    const credit = await sut.direct(seller, 'credit', 100);
    await sut.refused(
      'updateTransfer',
      { params: { transferId: credit.token }, form: { on_hold: 1 } },
      400,
      60019,
    );
    const today = (await client.control('GET', '/sandbox/card/clock')).body as { now: string };
    await sut.runPayouts(today.now.slice(0, 10));
    await sut.refused(
      'updateTransfer',
      { params: { transferId: transfer.token }, form: { on_hold: 1 } },
      400,
      60018,
    );
    const described = await sut.ok('updateTransfer', {
      params: { transferId: transfer.token },
      form: { description: 'Renamed' },
    });
    expect(described).toMatchObject({
      description: 'Renamed',
      payout: expect.stringMatching(/^pay_/),
    });
  });

  it('lists transfers by payment, seller, payout and paid_out', async () => {
    const other = (await sut.seller(2)).token as string;
    const paid = await sut.payment(9_000);
    const a = await sut.transfer(paid.token, { seller, amount: 1_000, commission_amount: 0 });
    const b = await sut.transfer(paid.token, {
      seller: other,
      amount: 2_000,
      commission_amount: 0,
      on_hold: 1,
    });
    const list = (query: Record<string, unknown>) => sut.ok('listTransfers', { query });
    expect(
      (await list({ payment: paid.token })).items.map((t: { token: string }) => t.token),
    ).toEqual([b.token, a.token]);
    expect(await list({ seller: other })).toMatchObject({
      total_count: 1,
      items: [{ token: b.token }],
    });
    const today = (await client.control('GET', '/sandbox/card/clock')).body as { now: string };
    const run = await sut.runPayouts(today.now.slice(0, 10));
    expect(await list({ payout: run.created[0] })).toMatchObject({
      total_count: 1,
      items: [{ token: a.token }],
    });
    expect(await list({ paid_out: 0 })).toMatchObject({
      total_count: 1,
      items: [{ token: b.token }],
    });
    expect(await list({ paid_out: 1 })).toMatchObject({
      total_count: 1,
      items: [{ token: a.token }],
    });
    await sut.refused('retrieveTransfer', { params: { transferId: 'tra_nothing' } }, 404, 60002);
  });
});
