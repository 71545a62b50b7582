import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient } from '../../support/card-api.js';
import { ibanOf, Marketplace, nextDay, sellerForm } from '../../support/marketplace.js';

describe('sandbox marketplace: sellers', () => {
  let client: CardSandboxClient;
  let sut: Marketplace;
  beforeAll(async () => {
    client = await CardSandboxClient.start();
    sut = await Marketplace.open(client);
  });
  afterAll(() => client.close());

  it('creates a seller from the nine required fields, business nested, with the defaults', async () => {
    const seller = await sut.seller(1);
    expect(seller).toMatchObject({
      token: expect.stringMatching(/^sel_/),
      status: 'Authorized',
      is_authorized: true,
      email: 'seller1@shop.example',
      business: {
        name: 'Business 1',
        title: 'Business 1 S.A.',
        tax_number: 'EL100000001',
        address: 'Ermou 1, Athens',
      },
      bank_accounts: [
        {
          token: expect.stringMatching(/^bnk_/),
          iban: sellerForm(1).bank_account_iban,
          bank_name: 'Alpha Bank',
          beneficiary_name: 'Business 1',
          is_default: true,
        },
      ],
      payout_interval: 'daily',
      payout_frequency: [],
      payout_threshold_amount: 0,
      payouts_on_hold: false,
      is_c2c: null,
    });
    expect(seller).not.toHaveProperty('business_name');
    const c2c = await sut.seller(2, { is_c2c: 1, payouts_on_hold: 1 });
    expect(c2c).toMatchObject({ is_c2c: true, payouts_on_hold: true });
  });

  it.each([
    'email',
    'contact_phone',
    'description',
    'business_name',
    'business_title',
    'business_tax_number',
    'business_address',
    'bank_account_iban',
    'bank_account_beneficiary',
  ])('refuses a seller without %s, naming it', async (field) => {
    const form = sellerForm(3);
    delete form[field];
    const error = await sut.refused('createSeller', { form }, 400, 80002);
    expect(error.message).toContain(field);
  });

  it('refuses an IBAN whose check digits are wrong', async () => {
    const iban = sellerForm(3).bank_account_iban as string;
    const wrong = `${iban.slice(0, 2)}${iban[2] === '9' ? '0' : '9'}${iban.slice(3)}`;
    const error = await sut.refused(
      'createSeller',
      { form: sellerForm(3, { bank_account_iban: wrong }) },
      400,
      80002,
    );
    expect(error.message).toContain('bank_account_iban');
  });

  it('takes weekly weekdays monday to friday and monthly day numbers, in calendar order', async () => {
    const weekly = await sut.seller(4, {
      payout_interval: 'weekly',
      payout_frequency: 'friday,monday,friday',
    });
    expect(weekly.payout_frequency).toEqual(['monday', 'friday']);
    const monthly = await sut.seller(5, {
      payout_interval: 'monthly',
      payout_frequency: '31,1,15',
    });
    expect(monthly.payout_frequency).toEqual(['1', '15', '31']);
    expect((await sut.seller(6, { payout_interval: 'weekly' })).payout_frequency).toEqual([
      'monday',
    ]);
    for (const [interval, frequency] of [
      ['weekly', 'saturday'],
      ['monthly', '32'],
      ['monthly', 'monday'],
      ['daily', 'monday'],
    ])
      await sut.refused(
        'createSeller',
        { form: sellerForm(7, { payout_interval: interval, payout_frequency: frequency }) },
        400,
        80002,
      );
  });

  it('takes a new IBAN only with its beneficiary, and uses it only once verified a day later', async () => {
    const seller = await sut.seller(8);
    const sellerId = seller.token as string;
    const update = (form: Record<string, unknown>) =>
      sut.ok('updateSeller', { params: { sellerId }, form });
    const newIban = ibanOf('GR', '02601250000000000000888');
    const error = await sut.refused(
      'updateSeller',
      { params: { sellerId }, form: { bank_account_iban: newIban } },
      400,
      80002,
    );
    expect(error.message).toContain('bank_account_beneficiary');
    await sut.refused(
      'updateSeller',
      { params: { sellerId }, form: { bank_account_beneficiary: 'X' } },
      400,
      80002,
    );

    const changed = await update({
      bank_account_iban: newIban,
      bank_account_beneficiary: 'New name',
      description: 'Renamed',
    });
    expect(changed.description).toBe('Renamed');
    expect(changed.bank_accounts).toEqual([
      expect.objectContaining({ iban: seller.bank_accounts[0].iban, is_default: true }),
      expect.objectContaining({ iban: newIban, bank_name: 'Eurobank', is_default: false }),
    ]);

    // A payout before the verification goes to the old account.
    const paid = await sut.payment(5_000);
    await sut.transfer(paid.token, { seller: sellerId, amount: 1_000, commission_amount: 100 });
    const first = await sut.runPayouts(await nextDay(client));
    const payout = await sut.ok('retrievePayout', { params: { payoutId: first.created[0] } });
    expect(payout.bank_account.iban).toBe(seller.bank_accounts[0].iban);

    await client.advanceClock(86_400);
    const verified = await sut.ok('retrieveSeller', { params: { sellerId } });
    expect(verified.bank_accounts).toEqual([
      expect.objectContaining({ iban: seller.bank_accounts[0].iban, is_default: false }),
      expect.objectContaining({ iban: newIban, beneficiary_name: 'New name', is_default: true }),
    ]);
  });

  it('lists sellers by tax number and by payouts on hold', async () => {
    const held = await sut.seller(9, { payouts_on_hold: 1 });
    const byTax = await sut.ok('listSellers', { query: { tax_number: 'EL100000009' } });
    expect(byTax).toMatchObject({ total_count: 1, items: [{ token: held.token }] });
    const onHold = await sut.ok('listSellers', { query: { payouts_on_hold: 1 } });
    expect(onHold.items.map((s: { token: string }) => s.token)).toContain(held.token);
    expect(onHold.items.filter((s: { payouts_on_hold: boolean }) => !s.payouts_on_hold)).toEqual(
      [],
    );
    const notHeld = await sut.ok('listSellers', { query: { payouts_on_hold: 0, count: 20 } });
    expect(notHeld.items.map((s: { token: string }) => s.token)).not.toContain(held.token);
  });

  it('reports is_authorized only while Authorized, and keeps a Closed seller closed', async () => {
    const seller = await sut.seller(10);
    const sellerId = seller.token as string;
    expect(await sut.sellerStatus(sellerId, 'Suspended')).toBe(200);
    expect(await sut.ok('retrieveSeller', { params: { sellerId } })).toMatchObject({
      status: 'Suspended',
      is_authorized: false,
    });
    expect(await sut.sellerStatus(sellerId, 'Closed')).toBe(200);
    expect(await sut.sellerStatus(sellerId, 'Authorized')).toBe(409);
    await sut.refused(
      'updateSeller',
      { params: { sellerId }, form: { description: 'x' } },
      400,
      60023,
    );
    await sut.refused('retrieveSeller', { params: { sellerId: 'sel_unknown' } }, 404, 60001);
  });

  it('changes the schedule: a new interval without frequency takes its default', async () => {
    const seller = await sut.seller(11, { payout_interval: 'weekly', payout_frequency: 'tuesday' });
    const sellerId = seller.token as string;
    const monthly = await sut.ok('updateSeller', {
      params: { sellerId },
      form: { payout_interval: 'monthly', payout_threshold_amount: 500 },
    });
    expect(monthly).toMatchObject({
      payout_interval: 'monthly',
      payout_frequency: ['1'],
      payout_threshold_amount: 500,
    });
    await sut.refused(
      'updateSeller',
      { params: { sellerId }, form: { payout_frequency: 'monday' } },
      400,
      80002,
    );
    // A refused update changes nothing.
    expect((await sut.ok('retrieveSeller', { params: { sellerId } })).payout_frequency).toEqual([
      '1',
    ]);
  });
});
