import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { verifyIrisHash } from '#src/shared/iris/iris-hash.js';
import { sandboxWalletToken } from '#src/sandbox/card/wallets/wallet-token.js';
import { CardSandboxClient, type Merchant } from '../../support/card-api.js';
import { formOf, page } from '../../support/card-pages.js';
import { testDatabaseUrl } from '../../support/test-gateway.js';

type Tokenization = {
  flow: 'direct' | 'form';
  data: { token?: string; hash?: string; md: string; callback_url: string; payload?: string };
};
type DomainList = { total_count: number; items: { domain_name: string; date_created: string }[] };

const CALLBACK = 'https://shop.example/wallet/back';
const inMinutes = (minutes: number) => Date.now() + minutes * 60_000;

describe('sandbox card API: wallets (web-wallet tokenisation, device-wallet domains)', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;

  const form = (overrides: Record<string, unknown> = {}) => ({
    amount: 1250,
    type: 'webwallet',
    callback_url: CALLBACK,
    token: sandboxWalletToken({ authMethod: 'CRYPTOGRAM_3DS', expiresAt: inMinutes(10) }),
    sandbox: 1,
    uuid: randomUUID(),
    currency: 'EUR',
    locale: 'en',
    md: 'order-88',
    ...overrides,
  });
  const tokenize = async (overrides: Record<string, unknown> = {}, key = merchant.publicKey) =>
    (await client.call<Tokenization>('tokenizeWebWallet', { key, form: form(overrides) })).body;
  const pay = (token: string, amount = 1250) =>
    client.send<{ token: string; status: string; error?: { code: number } }>('createPayment', {
      key: merchant.secretKey,
      form: { token, amount },
    });

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Wallet shop');
  });
  afterAll(() => client.close());

  it('cryptogram flow: answers flow direct with a ctn_ and a hash signed with the secret key over {callback_url, token, md}', async () => {
    const sut = await tokenize();
    expect(sut.flow).toBe('direct');
    expect(sut.data).toMatchObject({ md: 'order-88', callback_url: CALLBACK });
    expect(sut.data.token).toMatch(/^ctn_/);
    const json = Buffer.from(sut.data.hash as string, 'base64')
      .toString('utf8')
      .slice(65);
    expect(json).toBe(
      JSON.stringify({ callback_url: CALLBACK, token: sut.data.token, md: 'order-88' }),
    );
    expect(verifyIrisHash(merchant.secretKey, sut.data.hash as string)).toEqual({
      callback_url: CALLBACK,
      token: sut.data.token,
      md: 'order-88',
    });
    expect(verifyIrisHash(merchant.publicKey, sut.data.hash as string)).toBeUndefined();
  });

  it('the ctn_ pays once through POST /payments (then 400 20007), for the tokenised amount only (40029)', async () => {
    const { data } = await tokenize();
    expect((await pay(data.token as string, 999)).body.error?.code).toBe(40029);
    const paid = await pay(data.token as string);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'Captured' });
    expect(paid.body.token).toMatch(/^pmt_/);
    const again = await pay(data.token as string);
    expect({ status: again.status, code: again.body.error?.code }).toEqual({
      status: 400,
      code: 20007,
    });
  });

  it('the worked example path POST /payment-methods tokenises the same way', async () => {
    const sut = await client.call<Tokenization>('tokenizeWebWalletAlias', {
      key: merchant.publicKey,
      form: form(),
    });
    expect(sut.status).toBe(200);
    expect(sut.body.flow).toBe('direct');
    expect(verifyIrisHash(merchant.secretKey, sut.body.data.hash as string)?.token).toBe(
      sut.body.data.token,
    );
  });

  it('is called with the public key (Basic, empty password); no key is 401 10000', async () => {
    expect((await tokenize()).flow).toBe('direct');
    await client.refused('tokenizeWebWallet', { key: null, form: form() }, 401, 10000);
    await client.refused('tokenizeWebWallet', { key: 'pk_nobody', form: form() }, 401, 10000);
  });

  it('PAN-only flow: answers a form; the payer submits it, authenticates, and the ctn_ reaches callback_url signed the same way', async () => {
    const sut = await tokenize({
      token: sandboxWalletToken({ authMethod: 'PAN_ONLY', expiresAt: inMinutes(10) }),
      payer_email: 'payer@example.com',
    });
    expect(sut.flow).toBe('form');
    expect(sut.data.token).toBeUndefined();
    const checkout = formOf(sut.data.payload as string);
    expect(checkout.fields).toEqual({ md: 'order-88', pk: merchant.publicKey });
    const shown = await page(checkout.action, checkout.fields);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('€12.50');
    const authenticate = formOf(shown.html);
    const back = await page(new URL(authenticate.action, checkout.action).toString(), {});
    expect(back.status).toBe(200);
    const result = formOf(back.html);
    expect(result.action).toBe(CALLBACK);
    expect(result.fields.token).toMatch(/^ctn_/);
    expect(result.fields.md).toBe('order-88');
    expect(verifyIrisHash(merchant.secretKey, result.fields.hash)).toEqual({
      callback_url: CALLBACK,
      token: result.fields.token,
      md: 'order-88',
    });
    expect((await pay(result.fields.token)).status).toBe(200);
    // The page is over once the card token is made.
    expect((await page(checkout.action, checkout.fields)).status).toBe(409);
  });

  it('the control makes a wallet token on the sandbox clock (PAN-only here), refusing an unknown authMethod', async () => {
    const made = await client.control('POST', '/sandbox/card/wallet-tokens', {
      authMethod: 'PAN_ONLY',
      cardNumber: '5217925525906273',
    });
    expect(made.status).toBe(201);
    const token = (made.body as { token: string }).token;
    const sut = await tokenize({ token, payer_email: 'payer@example.com' });
    expect(sut.flow).toBe('form');
    const expired = await client.control('POST', '/sandbox/card/wallet-tokens', {
      expiresInSeconds: -1,
    });
    await client.refused(
      'tokenizeWebWallet',
      { key: merchant.publicKey, form: form({ token: (expired.body as { token: string }).token }) },
      400,
      20026,
    );
    const bad = await client.control('POST', '/sandbox/card/wallet-tokens', { authMethod: 'PIN' });
    expect(bad.status).toBe(400);
  });

  it('PAN-only needs payer_email or payer_phone (400 80002 payer_email)', async () => {
    const token = sandboxWalletToken({ authMethod: 'PAN_ONLY', expiresAt: inMinutes(10) });
    const refused = await client.refused(
      'tokenizeWebWallet',
      { key: merchant.publicKey, form: form({ token }) },
      400,
      80002,
    );
    expect(refused.body.error.message).toContain('payer_email');
    expect((await tokenize({ token, payer_phone: '+306900000001' })).flow).toBe('form');
  });

  it('an expired wallet token is 400 20026: by its own messageExpiration, and by the sandbox clock moving past it', async () => {
    const expired = sandboxWalletToken({
      authMethod: 'CRYPTOGRAM_3DS',
      expiresAt: Date.now() - 1000,
    });
    await client.refused(
      'tokenizeWebWallet',
      { key: merchant.publicKey, form: form({ token: expired }) },
      400,
      20026,
    );
    const own = await CardSandboxClient.start();
    try {
      const shop = await own.merchant();
      const soon = sandboxWalletToken({ authMethod: 'CRYPTOGRAM_3DS', expiresAt: inMinutes(5) });
      const call = { key: shop.publicKey, form: form({ token: soon }) };
      await own.advanceClock(301);
      await own.refused('tokenizeWebWallet', call, 400, 20026);
    } finally {
      await own.close();
    }
  });

  it('refuses a currency other than EUR (40003), md over 255 (80002 md), a missing required field, a reused uuid, an unreadable token', async () => {
    const key = merchant.publicKey;
    await client.refused('tokenizeWebWallet', { key, form: form({ currency: 'USD' }) }, 400, 40003);
    const long = await client.refused(
      'tokenizeWebWallet',
      { key, form: form({ md: 'x'.repeat(256) }) },
      400,
      80002,
    );
    expect(long.body.error.message).toContain('md');
    for (const field of ['amount', 'type', 'callback_url', 'token', 'sandbox', 'uuid']) {
      const body = form();
      delete (body as Record<string, unknown>)[field];
      const refused = await client.send<{ error: { message: string } }>('tokenizeWebWallet', {
        key,
        form: body,
      });
      expect({ field, status: refused.status }).toEqual({ field, status: 400 });
    }
    const uuid = randomUUID();
    await tokenize({ uuid });
    await client.refused('tokenizeWebWallet', { key, form: form({ uuid }) }, 400, 80002);
    await client.refused(
      'tokenizeWebWallet',
      { key, form: form({ token: 'bm90IGpzb24=' }) },
      400,
      80002,
    );
    await client.refused('tokenizeWebWallet', { key, form: form({ amount: 10 }) }, 400, 40002);
  });

  it('device-wallet domains: register (raw a[], indexed, percent-encoded), list, delete with reason; secret key only', async () => {
    const shop = await client.merchant('Domains shop');
    const key = shop.secretKey;
    const raw = await client.call<DomainList>('registerDeviceWalletDomains', {
      key,
      form: 'domain_names[]=shop.example&domain_names[]=Pay.Shop.example',
    });
    expect(raw.body.items.map((d) => d.domain_name)).toEqual(['shop.example', 'pay.shop.example']);
    const indexed = await client.call<DomainList>('registerDeviceWalletDomains', {
      key,
      form: 'domain_names[0]=checkout.example&domain_names[1]=shop.example',
    });
    expect(indexed.body.total_count).toBe(3);
    const encoded = await client.call<DomainList>('registerDeviceWalletDomains', {
      key,
      form: { domain_names: ['m.checkout.example'] },
    });
    expect(encoded.body.items.map((d) => d.domain_name)).toEqual([
      'shop.example',
      'pay.shop.example',
      'checkout.example',
      'm.checkout.example',
    ]);
    const listed = await client.call<DomainList>('listDeviceWalletDomains', { key });
    expect(listed.body).toEqual(encoded.body);

    const deleted = await client.call<DomainList>('deleteDeviceWalletDomains', {
      key,
      form: 'domain_names[]=shop.example&domain_names[]=checkout.example&reason=moved+away',
    });
    expect(deleted.body.items.map((d) => d.domain_name)).toEqual([
      'pay.shop.example',
      'm.checkout.example',
    ]);
    const book = client.sandbox.card.merchantBook(shop.merchantId)!;
    expect(
      [...book.domains.values()].filter((d) => d.status === 'deleted').map((d) => d.reason),
    ).toEqual(['moved away', 'moved away']);
    expect(
      (await client.call<DomainList>('listDeviceWalletDomains', { key })).body.total_count,
    ).toBe(2);
  });

  it('domain refusals: no reason, an unregistered name (nothing deleted), not a host name, the public key', async () => {
    const shop = await client.merchant();
    const key = shop.secretKey;
    await client.call('registerDeviceWalletDomains', {
      key,
      form: { domain_names: ['a.example'] },
    });
    const noReason = await client.refused(
      'deleteDeviceWalletDomains',
      { key, form: { domain_names: ['a.example'] } },
      400,
      80002,
    );
    expect(noReason.body.error.message).toContain('reason');
    await client.refused(
      'deleteDeviceWalletDomains',
      { key, form: { domain_names: ['a.example', 'b.example'], reason: 'gone' } },
      400,
      80002,
    );
    expect(
      (await client.call<DomainList>('listDeviceWalletDomains', { key })).body.total_count,
    ).toBe(1);
    await client.refused(
      'registerDeviceWalletDomains',
      { key, form: { domain_names: ['not a host'] } },
      400,
      80002,
    );
    await client.refused('registerDeviceWalletDomains', { key, form: {} }, 400, 80002);
    await client.refused(
      'registerDeviceWalletDomains',
      { key: shop.publicKey, form: { domain_names: ['c.example'] } },
      401,
      10003,
    );
    await client.refused('listDeviceWalletDomains', { key: shop.publicKey }, 401, 10003);
  });

  it('type devicewallet is taken only from a merchant with a registered domain', async () => {
    const shop = await client.merchant();
    const call = () => ({ key: shop.publicKey, form: form({ type: 'devicewallet' }) });
    await client.refused('tokenizeWebWallet', call(), 400, 80002);
    await client.call('registerDeviceWalletDomains', {
      key: shop.secretKey,
      form: { domain_names: ['shop.example'] },
    });
    expect((await client.call<Tokenization>('tokenizeWebWallet', call())).body.flow).toBe('direct');
  });
});

describe('sandbox wallets across a restart', () => {
  const schema = `sandbox_wallets_${randomBytes(4).toString('hex')}`;
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.end();
  });

  it('keeps the registered domains and the wallet card tokens (still paying once) in the sandbox schema', async () => {
    const database = { url: testDatabaseUrl(), schema };
    let client = await CardSandboxClient.start({ database });
    const shop = await client.merchant();
    await client.call('registerDeviceWalletDomains', {
      key: shop.secretKey,
      form: { domain_names: ['kept.example', 'gone.example'] },
    });
    await client.call('deleteDeviceWalletDomains', {
      key: shop.secretKey,
      form: { domain_names: ['gone.example'], reason: 'closed' },
    });
    const tokenized = await client.call<Tokenization>('tokenizeWebWallet', {
      key: shop.publicKey,
      form: {
        amount: 500,
        type: 'webwallet',
        callback_url: CALLBACK,
        token: sandboxWalletToken({ authMethod: 'CRYPTOGRAM_3DS', expiresAt: inMinutes(10) }),
        sandbox: 1,
        uuid: 'restart-1',
      },
    });
    await client.close();
    client = await CardSandboxClient.start({ database });
    try {
      const listed = await client.call<DomainList>('listDeviceWalletDomains', {
        key: shop.secretKey,
      });
      expect(listed.body.items.map((d) => d.domain_name)).toEqual(['kept.example']);
      const paid = await client.send('createPayment', {
        key: shop.secretKey,
        form: { token: tokenized.body.data.token as string, amount: 500 },
      });
      expect(paid.status).toBe(200);
      await client.refused(
        'tokenizeWebWallet',
        {
          key: shop.publicKey,
          form: {
            amount: 500,
            type: 'webwallet',
            callback_url: CALLBACK,
            token: sandboxWalletToken({ authMethod: 'CRYPTOGRAM_3DS', expiresAt: inMinutes(10) }),
            sandbox: 1,
            uuid: 'restart-1',
          },
        },
        400,
        80002,
      );
    } finally {
      await client.close();
    }
  });
});
