import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

/**
 * In Chromium: a payer pays a notification on the provider's hosted page, and an app's checkout page
 * takes a payer through the IRIS payment form and the bank page back to the app's return address.
 */
describe('hosted payment page and IRIS bank page, in Chromium', () => {
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
    // The app's own web server: a checkout page that asks Portico for an IRIS session and its form,
    // and the return address that shows the outcome Portico sends the browser back with.
    shop = createServer((request, response) => {
      const url = new URL(request.url ?? '/', shopUrl);
      void (async () => {
        if (url.pathname === '/checkout') {
          const session = await call('POST', '/v1/card/iris/sessions', {
            amount: 4200,
            country: 'GR',
            md: 'basket-1',
            returnUrl: `${shopUrl}/done`,
          });
          const form = await call('POST', `/v1/card/iris/sessions/${String(session.id)}/payform`);
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          response.end(
            `<!doctype html><h1>Checkout</h1><div id="pay-form">${String(form.payload)}</div>`,
          );
          return;
        }
        const session = await call(
          'GET',
          `/v1/card/iris/sessions/${url.searchParams.get('irisSession') ?? ''}`,
        );
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(
          `<!doctype html><h1>Thank you</h1><p id="outcome">${url.searchParams.get('status') ?? ''}</p><p id="payment">${String(session.paymentId)}</p>`,
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

  it('pays a notification on the hosted page; the facade then reports it Paid', async () => {
    const created = await call('POST', '/v1/card/notifications', {
      payeeName: 'Eleni Georgiou',
      payeeEmail: 'eleni@example.com',
      payeePhone: '+306900000001',
      amount: 2500,
      description: 'Invoice 42',
      locale: 'en',
    });
    await page.goto(String(created.paymentLinkUrl));
    await expect(page.locator('#amount').innerText()).resolves.toBe('€25.00');
    await page.locator('#card_number').fill('5217925525906273');
    await page.locator('#expiration_month').fill('12');
    await page.locator('#expiration_year').fill(String(new Date().getUTCFullYear() + 2));
    await page.locator('#holder_name').fill('Eleni Georgiou');
    await page.locator('#cvv').fill('123');
    await page.locator('#pay').click();
    await expect(page.locator('#status').innerText()).resolves.toBe('Paid');
    const read = await call('GET', `/v1/card/notifications/${String(created.token)}`);
    expect(read).toMatchObject({ status: 'Paid', payment: { status: 'Captured', amount: 2500 } });
  });

  it("runs the IRIS flow from the app's page through the bank page back to the app's return address", async () => {
    await page.goto(`${shopUrl}/checkout`);
    await page.locator('#iris-payform button').click();
    await expect(page.locator('#iris-amount').innerText()).resolves.toBe('€42.00');
    await page.locator('#iris-approve').click();
    await page.waitForURL(`${shopUrl}/done?**`);
    const url = new URL(page.url());
    expect(url.searchParams.get('status')).toBe('paid');
    await expect(page.locator('#outcome').innerText()).resolves.toBe('paid');
    await expect(page.locator('#payment').innerText()).resolves.toMatch(/^pmt_/);
    const session = await call(
      'GET',
      `/v1/card/iris/sessions/${url.searchParams.get('irisSession') ?? ''}`,
    );
    expect(session).toMatchObject({ status: 'captured', amount: 4200, md: 'basket-1' });
  });
});
