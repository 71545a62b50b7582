import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';
import { testDatabaseUrl } from '../../support/test-gateway.js';

type Payment = { token: string; status: string; merchant_ref: string | null };
type List<T> = { total_count: number; items: T[] };

describe('sandbox card controls and chaos on card operations', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const calls = async () =>
    (await client.control('GET', '/sandbox/calls')).body as Record<string, number>;
  const chaos = async (rule: Record<string, unknown>) => {
    const added = await client.control('POST', '/sandbox/chaos', rule);
    expect(added.status).toBe(201);
    return added.body as { id: number };
  };

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Controls shop');
  });
  afterEach(() => client.control('DELETE', '/sandbox/chaos'));
  afterAll(() => client.close());

  it('provisions merchants with their own keys, and refuses a bad name', async () => {
    expect(merchant.merchantId).toMatch(/^mer_/);
    expect(merchant.secretKey).toMatch(/^sk_/);
    expect(merchant.publicKey).toMatch(/^pk_/);
    const other = await client.merchant();
    expect(other.secretKey).not.toBe(merchant.secretKey);
    const bad = await client.control('POST', '/sandbox/card/merchants', { name: 42 });
    expect(bad.status).toBe(400);
  });

  it('reads and moves the card clock forward only', async () => {
    const before = (await client.control('GET', '/sandbox/card/clock')).body as { now: string };
    const after = await client.advanceClock(3_600);
    expect(new Date(after).getTime() - new Date(before.now).getTime()).toBeGreaterThanOrEqual(
      3_600_000,
    );
    expect(
      (await client.control('POST', '/sandbox/card/clock', { advanceSeconds: -1 })).status,
    ).toBe(400);
    expect((await client.control('POST', '/sandbox/card/clock', {})).status).toBe(400);
  });

  it('status faults a card operation by its operationId with a card error body, without performing it', async () => {
    await chaos({ operation: 'createPayment', fault: 'status', status: 503, times: 1 });
    const before = (await calls()).createPayment ?? 0;
    const refused = await client.send('createPayment', {
      key: merchant.secretKey,
      form: { amount: 100, ...cardFields() },
    });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      error: { status: 503, code: 99999, message: expect.stringContaining('chaos rule') },
    });
    expect((await calls()).createPayment ?? 0).toBe(before);
    const next = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: { amount: 100, ...cardFields() },
    });
    expect(next.status).toBe(200);
    expect((await calls()).createPayment).toBe(before + 1);
  });

  it('act-then-fail charges the card, then answers 500: the payment is found by its merchant_ref', async () => {
    await chaos({ operation: 'createPayment', fault: 'act-then-fail', times: 1 });
    const ref = `lost-${randomUUID()}`;
    const lost = await client.send('createPayment', {
      key: merchant.secretKey,
      form: { amount: 4_200, merchant_ref: ref, ...cardFields() },
    });
    expect(lost.status).toBe(500);
    const found = await client.call<List<Payment>>('listPayments', {
      key: merchant.secretKey,
      query: { merchant_ref: ref },
    });
    expect(found.body.items).toEqual([
      expect.objectContaining({ merchant_ref: ref, status: 'Captured' }),
    ]);
    const rules = (await client.control('GET', '/sandbox/chaos')).body as {
      rules: { withheld: { status: number; body: Payment }[] }[];
    };
    expect(rules.rules[0].withheld[0]).toMatchObject({ status: 200, body: { merchant_ref: ref } });
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { amount: 4_200, merchant_ref: ref, ...cardFields() } },
      409,
      40025,
    );
  });

  it('reset drops the connection of a card call, and bad-json answers text that does not parse', async () => {
    await chaos({ operation: 'listRefunds', fault: 'reset', times: 1 });
    await expect(client.send('listRefunds', { key: merchant.secretKey })).rejects.toThrow();
    await chaos({ operation: 'listBranches', fault: 'bad-json', times: 1 });
    await expect(client.send('listBranches', { key: merchant.secretKey })).rejects.toThrow(
      SyntaxError,
    );
    expect((await client.call('listBranches', { key: merchant.secretKey })).status).toBe(200);
  });

  it('refuses a chaos rule for an operation neither API has', async () => {
    const refused = await client.control('POST', '/sandbox/chaos', {
      operation: 'chargeEverything',
      fault: 'status',
    });
    expect(refused.status).toBe(400);
  });

  it('counts card calls and keeps their X-Request-IDs', async () => {
    const id = randomUUID();
    await client.call('listCustomers', {
      key: merchant.secretKey,
      headers: { 'x-request-id': id },
    });
    const ids = (await client.control('GET', '/sandbox/calls/listCustomers/request-ids'))
      .body as string[];
    expect(ids).toContain(id);
  });

  it('reset forgets the card records but keeps merchants, their keys and branches', async () => {
    const other = await CardSandboxClient.start();
    try {
      const shop = await other.merchant();
      await other.call('createPayment', {
        key: shop.secretKey,
        form: { amount: 100, ...cardFields() },
      });
      expect((await other.control('POST', '/sandbox/reset')).status).toBe(204);
      const payments = await other.call<List<Payment>>('listPayments', { key: shop.secretKey });
      expect(payments.body.total_count).toBe(0);
      const branches = await other.call<List<unknown>>('listBranches', { key: shop.secretKey });
      expect(branches.body.total_count).toBe(2);
    } finally {
      await other.close();
    }
  });
});

describe('the card side keeps its state in the sandbox schema across restarts', () => {
  const schema = `sandbox_card_${randomBytes(4).toString('hex')}`;
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.end();
  });

  it('carries on after a restart: merchants and keys, payments, refunds, customers, tokens and the clock', async () => {
    const database = { url: testDatabaseUrl(), schema };
    let client = await CardSandboxClient.start({ database });
    let shop: Merchant;
    let paymentId: string;
    let customerId: string;
    let tokenId: string;
    try {
      shop = await client.merchant('Persistent shop');
      const paid = await client.call<Payment>('createPayment', {
        key: shop.secretKey,
        form: { amount: 2_000, merchant_ref: 'persist-1', ...cardFields() },
      });
      paymentId = paid.body.token;
      await client.call('createRefund', {
        key: shop.secretKey,
        form: { payment: paymentId, amount: 500 },
      });
      customerId = (
        await client.call<{ token: string }>('createCustomer', {
          key: shop.secretKey,
          form: { ...cardFields(), full_name: 'Kept' },
        })
      ).body.token;
      tokenId = (
        await client.call<{ token: string }>('createCardToken', {
          key: shop.publicKey,
          form: cardFields(),
        })
      ).body.token;
      await client.advanceClock(10 * 60);
    } finally {
      await client.close();
    }
    const stored = await db.query<{ kind: string; data: unknown }>(
      `SELECT kind, data FROM "${schema}".card_state`,
    );
    expect(JSON.stringify(stored.rows)).not.toContain('5217925525906273');

    client = await CardSandboxClient.start({ database });
    try {
      const payment = await client.call<Payment & { refund_amount: number }>('retrievePayment', {
        key: shop.secretKey,
        params: { paymentId },
      });
      expect(payment.body).toMatchObject({ status: 'Partially Refunded', refund_amount: 500 });
      await client.refused(
        'createPayment',
        { key: shop.secretKey, form: { amount: 100, merchant_ref: 'persist-1', ...cardFields() } },
        409,
        40025,
      );
      const customer = await client.call<{ full_name: string }>('retrieveCustomer', {
        key: shop.secretKey,
        params: { customerId },
      });
      expect(customer.body.full_name).toBe('Kept');
      // 10 minutes passed before the restart: 5 more and the token has expired.
      await client.advanceClock(5 * 60);
      const token = await client.call<{ has_expired: boolean }>('retrieveCardToken', {
        key: shop.publicKey,
        params: { tokenId },
      });
      expect(token.body.has_expired).toBe(true);
    } finally {
      await client.close();
    }
  });
});
