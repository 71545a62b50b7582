import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CardSandboxClient } from '../../support/card-api.js';
import { Marketplace, nextDay } from '../../support/marketplace.js';

/** The sandbox's calendar starts on Monday 1 March 2027, 09:00 UTC, whatever day the suite runs. */
const START = Date.parse('2027-03-01T09:00:00Z');

describe('sandbox marketplace: reversals, payouts and the scheduler', () => {
  let client: CardSandboxClient;
  let sut: Marketplace;
  let seller: string;
  beforeAll(async () => {
    // Its clock runs at real speed from START, so the weekdays and month ends the scheduler meets
    // are the same on every run.
    const began = Date.now();
    client = await CardSandboxClient.start({ now: () => new Date(START + Date.now() - began) });
  });
  beforeEach(async () => {
    sut = await Marketplace.open(client);
    seller = (await sut.seller(1)).token as string;
  });
  afterAll(() => client.close());

  const today = async () =>
    ((await client.control('GET', '/sandbox/card/clock')).body as { now: string }).now.slice(0, 10);
  const reverse = (form: Record<string, unknown>) => sut.ok('createReversal', { form });
  const transferOf = (transferId: string) => sut.ok('retrieveTransfer', { params: { transferId } });

  it('reverses in full by default, commission included, back to the payment', async () => {
    const paid = await sut.payment(10_000);
    const transfer = await sut.transfer(paid.token, {
      seller,
      amount: 4_000,
      commission_amount: 400,
    });
    const reversal = await reverse({ transfer: transfer.token, description: 'Returned' });
    expect(reversal).toMatchObject({
      token: expect.stringMatching(/^rev_/),
      amount: 4_000,
      commission_amount: 400,
      transfer: transfer.token,
      payout: null,
      description: 'Returned',
    });
    expect(await transferOf(transfer.token)).toMatchObject({
      reversed_amount: 4_000,
      reversed_commission_amount: 400,
      is_reversed: true,
      reversals: [{ token: reversal.token }],
    });
    expect(await sut.balance()).toEqual({ available_amount: 0, current_amount: 10_000 });
    expect(await sut.sellerBalance(seller)).toBe(0);
    await sut.refused('createReversal', { form: { transfer: transfer.token } }, 400, 60020);
    // The payment can be refunded in full again.
    await sut.ok('createRefund', { form: { payment: paid.token } });
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('reverses part with the commission in proportion (rounded half up), is_reversed only when complete', async () => {
    const paid = await sut.payment(10_000);
    const transfer = await sut.transfer(paid.token, {
      seller,
      amount: 3_000,
      commission_amount: 301,
    });
    // 301 * 1000 / 3000 = 100.33 -> 100; 301 * 1500 / 3000 = 150.5 -> 151
    expect((await reverse({ transfer: transfer.token, amount: 1_000 })).commission_amount).toBe(
      100,
    );
    expect((await reverse({ transfer: transfer.token, amount: 1_500 })).commission_amount).toBe(
      151,
    );
    expect((await transferOf(transfer.token)).is_reversed).toBe(false);
    await sut.refused(
      'createReversal',
      { form: { transfer: transfer.token, amount: 501 } },
      400,
      60021,
    );
    // The last one takes the remaining commission.
    expect((await reverse({ transfer: transfer.token })).commission_amount).toBe(50);
    expect(await transferOf(transfer.token)).toMatchObject({
      reversed_amount: 3_000,
      reversed_commission_amount: 301,
      is_reversed: true,
    });
  });

  it('takes commission_amount over refund_commission, never beyond the remaining commission', async () => {
    const paid = await sut.payment(10_000);
    const transfer = await sut.transfer(paid.token, {
      seller,
      amount: 5_000,
      commission_amount: 500,
    });
    const none = await reverse({ transfer: transfer.token, amount: 1_000, refund_commission: 0 });
    expect(none.commission_amount).toBe(0);
    const explicit = await reverse({
      transfer: transfer.token,
      amount: 1_000,
      commission_amount: 300,
      refund_commission: 0,
    });
    expect(explicit.commission_amount).toBe(300);
    await sut.refused(
      'createReversal',
      { form: { transfer: transfer.token, amount: 1_000, commission_amount: 201 } },
      400,
      60022,
    );
    expect(await sut.sellerBalance(seller)).toBe(4_500 - 1_000 - 700);
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('ignores commission arguments for a direct transfer, and reverses a debit back to the seller', async () => {
    const paid = await sut.payment(10_000);
    await sut.transfer(paid.token, { seller, amount: 10_000, commission_amount: 2_000 });
    const credit = await sut.direct(seller, 'credit', 1_000);
    const back = await reverse({ transfer: credit.token, amount: 400, commission_amount: 0 });
    expect(back).toMatchObject({ amount: 400, commission_amount: 0 });
    const debit = await sut.direct(seller, 'debit', 500);
    await reverse({ transfer: debit.token });
    expect(await sut.sellerBalance(seller)).toBe(8_000 + 1_000 - 400);
    expect(await sut.balance()).toEqual({
      available_amount: 2_000 - 1_000 + 400,
      current_amount: 0,
    });
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('reverses after a payout only from the seller floating balance, and deducts it from the next payout', async () => {
    const paid = await sut.payment(10_000);
    const transfer = await sut.transfer(paid.token, {
      seller,
      amount: 4_000,
      commission_amount: 400,
    });
    const first = await sut.runPayouts(await today());
    expect(first.created).toHaveLength(1);
    await sut.refused(
      'createReversal',
      { form: { transfer: transfer.token, amount: 1_000 } },
      400,
      60017,
    );
    await sut.transfer(paid.token, { seller, amount: 2_000, commission_amount: 0 });
    const reversal = await reverse({ transfer: transfer.token, amount: 1_000 });
    expect(reversal.commission_amount).toBe(100);
    const next = await sut.runPayouts(await nextDay(client));
    expect(next.deposited).toEqual(first.created);
    const payout = await sut.ok('retrievePayout', { params: { payoutId: next.created[0] } });
    expect(payout).toMatchObject({
      amount: 2_000 - 900,
      transfer_amount: 2_000,
      commission_amount: 0,
      reversal_amount: 1_000,
      reversed_commission_amount: 100,
      transfer_count: 1,
      reversal_count: 1,
      status: 'Pending',
    });
    const listed = await sut.ok('listReversals', { query: { payout: payout.token } });
    expect(listed).toMatchObject({
      total_count: 1,
      items: [{ token: reversal.token, payout: payout.token }],
    });
    expect(await sut.ok('listReversals', { query: { paid_out: 0 } })).toMatchObject({
      total_count: 0,
    });
    expect(await sut.ok('listReversals', { query: { transfer: transfer.token } })).toMatchObject({
      total_count: 1,
    });
    await sut.refused('retrieveReversal', { params: { reversalId: 'rev_nothing' } }, 404, 60003);
  });

  it('pays out the whole available balance Pending, deposits it on the next run, with sums that add up', async () => {
    const paid = await sut.payment(20_000);
    await sut.transfer(paid.token, { seller, amount: 8_000, commission_amount: 800 });
    await sut.transfer(paid.token, { seller, amount: 2_000, commission_amount: 200 });
    await sut.direct(seller, 'debit', 500);
    const day = await today();
    const run = await sut.runPayouts(day);
    const payout = await sut.ok('retrievePayout', { params: { payoutId: run.created[0] } });
    expect(payout).toMatchObject({
      amount: 8_500,
      currency: 'EUR',
      status: 'Pending',
      is_deposited: false,
      date_deposited: null,
      seller,
      statement_description: `PAYOUT ${day}`,
      transfer_amount: 9_500,
      commission_amount: 1_000,
      reversal_amount: 0,
      reversed_commission_amount: 0,
      transfer_count: 3,
      reversal_count: 0,
      bank_account: { is_default: true },
    });
    expect(await sut.sellerBalance(seller)).toBe(0);
    // Once a day per seller.
    await sut.transfer(paid.token, { seller, amount: 1_000, commission_amount: 0 });
    expect((await sut.runPayouts(day)).created).toEqual([]);
    const next = await nextDay(client);
    const later = await sut.runPayouts(next);
    expect(later.deposited).toEqual([payout.token]);
    expect(await sut.ok('retrievePayout', { params: { payoutId: payout.token } })).toMatchObject({
      status: 'Deposited',
      is_deposited: true,
      date_deposited: `${next}T00:00:00+0000`,
    });
    expect(await sut.ok('listPayouts', { query: { seller, is_deposited: 1 } })).toMatchObject({
      total_count: 1,
      items: [{ token: payout.token }],
    });
    expect(await sut.ok('listPayouts', { query: { is_deposited: 0 } })).toMatchObject({
      total_count: 1,
      items: [{ token: later.created[0] }],
    });
    await sut.refused('retrievePayout', { params: { payoutId: 'pay_nothing' } }, 404, 60004);
  });

  it('pays out only a balance above the threshold and never while payouts are on hold', async () => {
    const paid = await sut.payment(10_000);
    const thrifty = (await sut.seller(2, { payout_threshold_amount: 1_000 })).token as string;
    const held = (await sut.seller(3, { payouts_on_hold: 1 })).token as string;
    await sut.transfer(paid.token, { seller: thrifty, amount: 1_000, commission_amount: 0 });
    await sut.transfer(paid.token, { seller: held, amount: 1_000, commission_amount: 0 });
    expect((await sut.runPayouts(await today())).created).toEqual([]);
    await sut.transfer(paid.token, { seller: thrifty, amount: 1, commission_amount: 0 });
    await sut.ok('updateSeller', { params: { sellerId: held }, form: { payouts_on_hold: 0 } });
    const run = await sut.runPayouts(await nextDay(client));
    expect(run.created).toHaveLength(2);
  });

  it('pays weekly sellers on their weekdays and monthly 29-31 on the last day of shorter months', async () => {
    const weekly = (
      await sut.seller(4, { payout_interval: 'weekly', payout_frequency: 'wednesday' })
    ).token as string;
    const monthly = (await sut.seller(5, { payout_interval: 'monthly', payout_frequency: '31' }))
      .token as string;
    const paid = await sut.payment(10_000);
    await sut.transfer(paid.token, { seller: weekly, amount: 1_000, commission_amount: 0 });
    await sut.transfer(paid.token, { seller: monthly, amount: 1_000, commission_amount: 0 });
    const tuesday = await nextDay(client, (d) => d.getUTCDay() === 2);
    expect((await sut.runPayouts(tuesday)).created).toEqual([]);
    const wednesday = await nextDay(client, (d) => d.getUTCDay() === 3);
    const paidWeekly = await sut.runPayouts(wednesday);
    expect(paidWeekly.created).toHaveLength(1);
    const short = (d: Date) => {
      const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      return last < 31 && d.getUTCDate() === last;
    };
    const lastOfShortMonth = await nextDay(client, short);
    const dayBefore = new Date(Date.parse(`${lastOfShortMonth}T00:00:00Z`) - 86_400_000)
      .toISOString()
      .slice(0, 10);
    expect((await sut.runPayouts(dayBefore)).created).toEqual([]);
    const run = await sut.runPayouts(lastOfShortMonth);
    const payouts = await sut.ok('listPayouts', { query: { seller: monthly } });
    expect(payouts).toMatchObject({ total_count: 1, items: [{ token: run.created[0] }] });
    expect((await sut.invariants()).violations).toEqual([]);
  });

  it('refuses a scheduler day before the sandbox clock', async () => {
    const answer = await client.control('POST', '/sandbox/card/marketplace/payouts/run', {
      date: '2001-01-01',
    });
    expect(answer.status).toBe(400);
  });
});
