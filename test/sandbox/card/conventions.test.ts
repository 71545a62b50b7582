import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';

type Payment = { token: string; metadata: Record<string, string>; status: string };
type List<T> = { total_count: number; items: T[] };

describe('sandbox card API: transport, keys and shared conventions', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const formOf = (fields: Record<string, string>) =>
    Object.entries(fields)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&');

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant();
  });
  afterAll(() => client.close());

  it('reads nested fields with raw brackets, percent-encoded brackets and numeric indices alike', async () => {
    const card = formOf(cardFields());
    const raw = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: `amount=100&${card}&metadata[order]=A-1&metadata[channel]=web`,
    });
    const encoded = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: `amount=100&${card}&metadata%5Border%5D=A-1&metadata%5Bchannel%5D=web`,
    });
    expect(raw.body.metadata).toEqual({ order: 'A-1', channel: 'web' });
    expect(encoded.body.metadata).toEqual({ order: 'A-1', channel: 'web' });
  });

  it('refuses a list (a[]) where an object is due, naming the field', async () => {
    const refused = await client.refused(
      'createPayment',
      {
        key: merchant.secretKey,
        form: `amount=100&${formOf(cardFields())}&metadata[]=x&metadata[]=y`,
      },
      400,
      80002,
    );
    expect(refused.body.error.message).toContain('metadata');
  });

  it('keeps a numeric metadata key as an object key', async () => {
    const paid = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: `amount=100&${formOf(cardFields())}&metadata%5B0%5D=zero`,
    });
    expect(paid.body.metadata).toEqual({ 0: 'zero' });
  });

  it('refuses a field given twice and a body that is not a form', async () => {
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: `amount=100&amount=200&${formOf(cardFields())}` },
      400,
      80002,
    );
    const json = await client.refused(
      'createPayment',
      {
        key: merchant.secretKey,
        form: JSON.stringify({ amount: 100 }),
        headers: { 'content-type': 'application/json' },
      },
      400,
      80002,
    );
    expect(json.body.error.message).toContain('Content-Type');
  });

  it('answers 401 10000 without a key, with an unknown key or with a malformed header', async () => {
    await client.refused('listPayments', { key: null }, 401, 10000);
    await client.refused('listPayments', { key: 'sk_sandbox_unknown' }, 401, 10000);
    const bearer = await client.send('listPayments', {
      key: null,
      headers: { authorization: `Bearer ${merchant.secretKey}` },
    });
    expect([bearer.status, (bearer.body as { error: { code: number } }).error.code]).toEqual([
      401, 10000,
    ]);
  });

  it('accepts the key with a password after the colon (ignored)', async () => {
    const withPassword = await client.send<List<Payment>>('listPayments', {
      key: null,
      headers: {
        authorization: `Basic ${Buffer.from(`${merchant.secretKey}:ignored`).toString('base64')}`,
      },
    });
    expect(withPassword.status).toBe(200);
  });

  it('lets a public key create and read card tokens but nothing else (401 10003)', async () => {
    const token = await client.call<{ token: string }>('createCardToken', {
      key: merchant.publicKey,
      form: cardFields(),
    });
    expect(token.body.token).toMatch(/^ctn_/);
    await client.call('retrieveCardToken', {
      key: merchant.publicKey,
      params: { tokenId: token.body.token },
    });
    await client.refused(
      'createPayment',
      { key: merchant.publicKey, form: { amount: 100, token: token.body.token } },
      401,
      10003,
    );
    await client.refused('listPayments', { key: merchant.publicKey }, 401, 10003);
    await client.refused('listCustomers', { key: merchant.publicKey }, 401, 10003);
  });

  it("keeps merchants apart: another merchant's payment is not found", async () => {
    const paid = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: { amount: 100, ...cardFields() },
    });
    const other = await client.merchant('Someone else');
    await client.refused(
      'retrievePayment',
      { key: other.secretKey, params: { paymentId: paid.body.token } },
      404,
      40005,
    );
    const theirs = await client.call<List<Payment>>('listPayments', { key: other.secretKey });
    expect(theirs.body.total_count).toBe(0);
  });

  it('answers an unknown path 404 10002 and an unsupported method 405 10004', async () => {
    const unknown = await client.raw('GET', '/nothing-here', { key: merchant.secretKey });
    expect([unknown.status, (unknown.body as { error: { code: number } }).error.code]).toEqual([
      404, 10002,
    ]);
    const method = await client.raw('DELETE', '/payments', { key: merchant.secretKey });
    expect([method.status, (method.body as { error: { code: number } }).error.code]).toEqual([
      405, 10004,
    ]);
  });

  it('lists in the envelope with count 1 to 20 (default 10), offset and an unknown query parameter refused', async () => {
    const shop = await client.merchant();
    for (let i = 0; i < 12; i++)
      await client.call('createPayment', {
        key: shop.secretKey,
        form: { amount: 100 + i, ...cardFields() },
      });
    const first = await client.call<List<{ amount: number }>>('listPayments', {
      key: shop.secretKey,
    });
    expect(first.body.total_count).toBe(12);
    expect(first.body.items).toHaveLength(10);
    expect(first.body.items[0].amount).toBe(111); // most recent first
    const rest = await client.call<List<{ amount: number }>>('listPayments', {
      key: shop.secretKey,
      query: { count: 20, offset: 10 },
    });
    expect(rest.body.items.map((p) => p.amount)).toEqual([101, 100]);
    const one = await client.call<List<unknown>>('listPayments', {
      key: shop.secretKey,
      query: { count: 1 },
    });
    expect(one.body.items).toHaveLength(1);
    const tooMany = await client.refused(
      'listPayments',
      { key: shop.secretKey, query: { count: 21 } },
      400,
      80002,
    );
    expect(tooMany.body.error.message).toBe('The following parameter has an invalid value: count');
    await client.refused('listPayments', { key: shop.secretKey, query: { count: 0 } }, 400, 80002);
    await client.refused(
      'listPayments',
      { key: shop.secretKey, query: { colour: 'red' } },
      400,
      80001,
    );
  });

  it('filters lists by creation day, inclusive, on the sandbox clock', async () => {
    const other = await CardSandboxClient.start();
    try {
      const shop = await other.merchant();
      const day = (iso: string) => iso.slice(0, 10);
      const pay = () =>
        other.call('createPayment', {
          key: shop.secretKey,
          form: { amount: 100, ...cardFields() },
        });
      await pay();
      const today = day(
        ((await other.control('GET', '/sandbox/card/clock')).body as { now: string }).now,
      );
      const tomorrow = day(await other.advanceClock(86_400));
      await pay();
      await pay();
      const list = (query: Record<string, string>) =>
        other.call<List<unknown>>('listPayments', { key: shop.secretKey, query });
      expect((await list({ date_from: today, date_to: today })).body.total_count).toBe(1);
      expect((await list({ date_from: tomorrow })).body.total_count).toBe(2);
      expect((await list({ date_to: today })).body.total_count).toBe(1);
      await other.refused(
        'listPayments',
        { key: shop.secretKey, query: { date_from: tomorrow, date_to: today } },
        400,
        80002,
      );
      await other.refused(
        'listPayments',
        { key: shop.secretKey, query: { date_from: '23-11-2026' } },
        400,
        80002,
      );
    } finally {
      await other.close();
    }
  });
});
