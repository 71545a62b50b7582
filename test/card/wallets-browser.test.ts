import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { sandboxWalletToken } from '#src/sandbox/card/wallets/wallet-token.js';
import { launchBrowser } from '../support/browser.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

/**
 * In Chromium: an app's checkout page shows the PAN-only web-wallet form Portico got from the provider,
 * the payer completes 3-D Secure on the provider's page, and the browser comes back through Portico
 * (which verifies the signed card token) to the app's return address, where the app charges it.
 */
describe('PAN-only web wallet, in Chromium', () => {
  let gateway: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let appKey: string;
  let shop: Server;
  let shopUrl: string;

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const response = await gateway.app.inject({
      method,
      url,
      headers: bearer(appKey),
      ...(payload ? { payload } : {}),
    });
    return response.json() as Record<string, unknown>;
  };

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    appKey = (await gateway.newTenantWithKey('app')).key;
    // The app's server: a checkout page with the form of a PAN-only tokenisation, and the return
    // address, which charges the card token Portico verified.
    shop = createServer((request, response) => {
      const url = new URL(request.url ?? '/', shopUrl);
      void (async () => {
        if (url.pathname === '/checkout') {
          const created = await call('POST', '/v1/card/wallets/tokenizations', {
            amount: 3100,
            type: 'webwallet',
            token: sandboxWalletToken({ authMethod: 'PAN_ONLY', expiresAt: Date.now() + 600_000 }),
            md: 'basket-7',
            locale: 'en',
            payerEmail: 'payer@example.com',
            returnUrl: `${shopUrl}/done`,
          });
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          response.end(`<!doctype html><h1>Checkout</h1><div>${String(created.form)}</div>`);
          return;
        }
        const id = url.searchParams.get('walletTokenization') ?? '';
        const tokenization = await call('GET', `/v1/card/wallets/tokenizations/${id}`);
        const payment = await call('POST', '/v1/card/payments', {
          token: tokenization.cardToken,
          amount: 3100,
        });
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(
          `<!doctype html><h1>Thank you</h1><p id="outcome">${url.searchParams.get('status') ?? ''}</p><p id="payment">${String(payment.token)}</p>`,
        );
      })();
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    shop?.closeAllConnections();
    await new Promise<void>((resolve) => (shop ? shop.close(() => resolve()) : resolve()));
    await gateway?.close();
  });

  it("takes the payer from the app's page through 3-D Secure back to the app, which charges the verified card token", async () => {
    await page.goto(`${shopUrl}/checkout`);
    await page.locator('#webwallet-form button').click();
    await expect(page.locator('#webwallet-amount').innerText()).resolves.toBe('€31.00');
    await page.locator('#webwallet-authenticate').click();
    await page.waitForURL(`${shopUrl}/done?**`);
    const url = new URL(page.url());
    expect(url.searchParams.get('status')).toBe('verified');
    await expect(page.locator('#payment').innerText()).resolves.toMatch(/^pmt_/);
    const tokenization = await call(
      'GET',
      `/v1/card/wallets/tokenizations/${url.searchParams.get('walletTokenization') ?? ''}`,
    );
    expect(tokenization).toMatchObject({ status: 'charged', amount: 3100, md: 'basket-7' });
  });
});
