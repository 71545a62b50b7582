import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page, Request } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { startCheckoutShop, type CheckoutShop } from '../support/checkout-shop.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD_NUMBER = '4556390755719395';

interface TokenizationConfig {
  publicKey: string;
  tokenizationUrl: string;
  pageUrl: string;
}

/**
 * In Chromium: the payer types the card into Portico's tokenisation page embedded in the app's
 * checkout; the browser sends it to the provider (the sandbox) with the tenant's public key, the app
 * gets a `ctn_` by postMessage and pays with it through the facade. Portico never sees the card.
 */
describe('card tokens made in the browser with the public key, in Chromium', () => {
  let gateway: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let app: { tenantId: string; key: string };
  let shop: CheckoutShop;

  const call = (method: 'GET' | 'POST', url: string, key: string, payload?: object) =>
    gateway.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    app = await gateway.newTenantWithKey('app');
    // The app's own web server: its checkout page asks Portico (server side, with the app key) for the
    // tokenisation settings and embeds Portico's page; the token comes back by postMessage.
    shop = await startCheckoutShop({
      config: async () => (await call('GET', '/v1/card/tokenization-config', app.key)).json(),
      gatewayOrigin: new URL(gateway.baseUrl).origin,
      shown: 'event.data.card.lastFour',
      frameHeight: 300,
    });
    browser = await launchBrowser({ ignoreHTTPSErrors: true });
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await shop?.close();
    await gateway?.close();
  });

  it("gives an app key its tenant's public key and the provider's token endpoint, never the secret key", async () => {
    const answer = await call('GET', '/v1/card/tokenization-config', app.key);
    expect(answer.statusCode).toBe(200);
    const config = answer.json<TokenizationConfig>();
    expect(config).toEqual({
      publicKey: expect.stringMatching(/^pk_/),
      tokenizationUrl: `${gateway.sandbox.cardUrl}/tokens`,
      pageUrl: `${gateway.baseUrl}/card/tokenize`,
    });
    const [row] = (await gateway.dataSource.query(
      'SELECT merchant_id FROM card_credentials WHERE tenant_id = $1',
      [app.tenantId],
    )) as { merchant_id: string }[];
    expect(gateway.sandbox.card.keyOwner(config.publicKey)).toEqual({
      merchantId: row.merchant_id,
      kind: 'public',
    });
    expect(answer.body).not.toContain('sk_');

    const auditor = await gateway.newTenantWithKey('auditor');
    expect((await call('GET', '/v1/card/tokenization-config', auditor.key)).statusCode).toBe(403);
  });

  it('serves the page with a strict CSP (its script only, the provider only, framed by the given origin) and refuses a bad origin by name', async () => {
    const { publicKey } = (
      await call('GET', '/v1/card/tokenization-config', app.key)
    ).json<TokenizationConfig>();
    const query = new URLSearchParams({ publicKey, origin: 'https://shop.example' });
    const served = await gateway.app.inject({ method: 'GET', url: `/card/tokenize?${query}` });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src ${gateway.sandbox.cardUrl}; frame-src https: ${gateway.sandbox.scaUrl}; form-action 'none'; frame-ancestors https://shop.example; base-uri 'none'`,
    );
    expect(served.body).not.toMatch(/<script>|<input[^>]* name=/);

    const bad = await gateway.app.inject({
      method: 'GET',
      url: `/card/tokenize?publicKey=${publicKey}&origin=javascript:alert(1)`,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(bad.json<{ errors: { field: string }[] }>().errors).toEqual([
      expect.objectContaining({ field: 'origin' }),
    ]);
  });

  it('takes the card in the browser to the provider, hands back a ctn_ the app pays with, and Portico never sees the number', async () => {
    const porticoOrigin = new URL(gateway.baseUrl).origin;
    const providerOrigin = new URL(gateway.sandbox.cardUrl).origin;
    const toPortico: Request[] = [];
    const toProvider: Request[] = [];
    page.on('request', (request) => {
      const origin = new URL(request.url()).origin;
      if (origin === porticoOrigin) toPortico.push(request);
      if (origin === providerOrigin) toProvider.push(request);
    });
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    const logsBefore = gateway.logs.length;

    await page.goto(`${shop.url}/checkout`);
    const form = page.frameLocator('#card-frame');
    await form.locator('#card-number').fill(CARD_NUMBER.replace(/(\d{4})(?=\d)/g, '$1 '));
    await form.locator('#expiration-month').fill('12');
    await form.locator('#expiration-year').fill('2030');
    await form.locator('#cvv').fill('123');
    await form.locator('#holder-name').fill('Ada Lovelace');
    await form.locator('#submit').click();
    await page.locator('#token', { hasText: /^ctn_\S+ 9395$/ }).waitFor();
    const token = (await page.locator('#token').innerText()).split(' ')[0];
    await expect(form.locator('#status').innerText()).resolves.toBe('Card ending 9395 accepted');
    await expect(form.locator('#card-number').inputValue()).resolves.toBe('');

    // The app's server pays with the token, through the facade.
    const payment = await call('POST', '/v1/card/payments', app.key, { amount: 1500, token });
    expect(payment.statusCode).toBe(201);
    expect(payment.json()).toMatchObject({
      status: 'Captured',
      amount: 1500,
      card: { lastFour: '9395' },
    });
    expect(payment.body).not.toContain(CARD_NUMBER);

    // The browser asked Portico for the page, its script and its style only; the card went to the provider.
    expect(toPortico.map((r) => `${r.method()} ${new URL(r.url()).pathname}`).sort()).toEqual([
      'GET /card/tokenize',
      'GET /card/tokenize.css',
      'GET /card/tokenize.js',
    ]);
    for (const request of toPortico) {
      const seen = [request.url(), request.postData() ?? '', JSON.stringify(request.headers())];
      expect(seen.join('\n')).not.toContain(CARD_NUMBER);
    }
    const tokenCalls = toProvider.filter((r) => r.method() === 'POST');
    expect(tokenCalls).toHaveLength(1);
    expect(tokenCalls[0].url()).toBe(`${gateway.sandbox.cardUrl}/tokens`);
    expect(tokenCalls[0].postData()).toContain(`card_number=${CARD_NUMBER}`);
    // Portico's own log of this whole flow (its requests, its call to the provider) has no card number.
    const logs = gateway.logs.slice(logsBefore).join('\n');
    expect(logs).toContain('/card/tokenize');
    expect(logs).not.toContain(CARD_NUMBER);
    expect(errors).toEqual([]);
  });

  it('shows the provider refusal in the page and tells the app, without a token', async () => {
    await page.goto(`${shop.url}/checkout`);
    const form = page.frameLocator('#card-frame');
    await form.locator('#card-number').fill('4556390755719396');
    await form.locator('#expiration-month').fill('12');
    await form.locator('#expiration-year').fill('2030');
    await form.locator('#cvv').fill('123');
    await form.locator('#holder-name').fill('Ada Lovelace');
    await form.locator('#submit').click();
    await page.locator('#error', { hasText: /^20000 / }).waitFor();
    await expect(form.locator('#status').innerText()).resolves.toMatch(/Invalid card number/);
    await expect(page.locator('#token').innerText()).resolves.toBe('');
  });
});
