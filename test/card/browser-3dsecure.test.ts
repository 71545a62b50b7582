import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { launchBrowser } from '../support/browser.js';
import { startCheckoutShop, type CheckoutShop } from '../support/checkout-shop.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

/**
 * In Chromium, for a merchant of the provider's 3-D Secure type: Portico's tokenisation page runs the
 * issuer's authentication in the payer's browser (frictionless, a challenge approved or refused, a
 * failed authentication) and hands back a token only when it succeeded; the payment shows the outcome.
 * The facade refuses card fields for such a merchant with a problem that points to the page.
 */
describe('3-D Secure tokenisation in the browser, in Chromium', () => {
  let gateway: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let app: { tenantId: string; key: string };
  let shop: CheckoutShop;

  const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
    gateway.app.inject({ method, url, headers: bearer(app.key), ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    app = await gateway.newTenantWithKey('app');
    // The tenant's merchant at the provider is of the 3-D Secure type (an operator sets its keys).
    const made = await request(`${gateway.sandbox.scaUrl}/sandbox/card/merchants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Secure shop', type: '3dsecure' }),
    });
    const merchant = (await made.body.json()) as { secretKey: string; publicKey: string };
    const operator = await gateway.newTenantWithKey('operator');
    const set = await gateway.app.inject({
      method: 'PUT',
      url: `/v1/tenants/${app.tenantId}/card-credentials`,
      headers: bearer(operator.key),
      payload: { secretKey: merchant.secretKey, publicKey: merchant.publicKey },
    });
    expect(set.statusCode).toBe(200);
    shop = await startCheckoutShop({
      config: async () => (await call('GET', '/v1/card/tokenization-config')).json(),
      gatewayOrigin: new URL(gateway.baseUrl).origin,
      shown: 'event.data.threeDSecure.authDesc',
      frameHeight: 520,
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

  /** Types a card into the embedded page and submits it. */
  async function enter(cardNumber: string) {
    await page.goto(`${shop.url}/checkout`);
    const form = page.frameLocator('#card-frame');
    await form.locator('#card-number').fill(cardNumber);
    await form.locator('#expiration-month').fill('12');
    await form.locator('#expiration-year').fill('2030');
    await form.locator('#cvv').fill('123');
    await form.locator('#holder-name').fill('Ada Lovelace');
    await form.locator('#submit').click();
    return form;
  }

  /** Pays with the token the page handed back, through the facade; answers the payment's tds. */
  async function pay(): Promise<Record<string, unknown>> {
    const token = (await page.locator('#token').innerText()).split(' ')[0];
    const payment = await call('POST', '/v1/card/payments', { amount: 2500, token });
    expect(payment.statusCode).toBe(201);
    return payment.json().card.tds as Record<string, unknown>;
  }

  it('refuses card fields through the facade with a problem naming them and pointing to the page', async () => {
    const card = {
      cardNumber: '4111111111111111',
      expirationMonth: '12',
      expirationYear: '2030',
      holderName: 'Ada Lovelace',
      cvv: '123',
    };
    const refused = [
      await call('POST', '/v1/card/payments', { amount: 2500, ...card }),
      await call('POST', '/v1/card/customers', { ...card, cvv: undefined }),
    ];
    for (const [answer, code] of [
      [refused[0], '20011'],
      [refused[1], '20016'],
    ] as const) {
      expect(answer.statusCode).toBe(400);
      expect(answer.headers['content-type']).toContain('application/problem+json');
      const problem = answer.json();
      expect(problem).toMatchObject({
        type: 'urn:portico:problem:card-fields-not-allowed',
        title: 'Card fields not allowed',
        tokenizationConfig: '/v1/card/tokenization-config',
        upstream: { status: 400, code },
      });
      expect(problem.detail).toContain('tokenization-config');
      expect(problem.errors.map((error: { field: string }) => error.field)).toEqual(
        expect.arrayContaining(['cardNumber', 'expirationMonth', 'expirationYear', 'holderName']),
      );
    }
  });

  it('frictionless: a token at once, and the payment shows the authentication', async () => {
    await enter('4111111111111111');
    await page.locator('#token', { hasText: /^ctn_\S+ Frictionless$/ }).waitFor();
    expect(await pay()).toEqual({
      enrolled: 'Y',
      eciFlag: '05',
      authCode: expect.stringMatching(/^[0-9A-F]{6}$/),
      authDesc: 'Frictionless',
    });
  });

  it('challenge approved: the bank page is framed in the card page, the payer approves, then the token', async () => {
    const form = await enter('4000000000003220');
    const challenge = form.frameLocator('#challenge');
    // The status changes when the provider's answer arrives: waited for, not read at once.
    await form.locator('#status', { hasText: /^Your bank asks you to confirm$/ }).waitFor();
    await challenge.locator('#tds-card', { hasText: '3220' }).waitFor();
    await expect(page.locator('#token').innerText()).resolves.toBe('');
    await challenge.locator('#tds-approve').click();
    await page.locator('#token', { hasText: /^ctn_\S+ Challenge approved$/ }).waitFor();
    await expect(form.locator('#challenge').count()).resolves.toBe(0);
    expect(await pay()).toMatchObject({ enrolled: 'Y', authDesc: 'Challenge approved' });
  });

  it('challenge refused: no token, the provider refusal (20012) shown and told', async () => {
    const form = await enter('4000000000003220');
    await form.frameLocator('#challenge').locator('#tds-refuse').click();
    await page.locator('#error', { hasText: /^20012 / }).waitFor();
    await expect(form.locator('#status').innerText()).resolves.toMatch(/authentication failed/);
    await expect(page.locator('#token').innerText()).resolves.toBe('');
  });

  it('authentication failure: no challenge, no token, 20012', async () => {
    const form = await enter('4000000000003097');
    await page.locator('#error', { hasText: /^20012 / }).waitFor();
    await expect(form.locator('#challenge').count()).resolves.toBe(0);
    await expect(page.locator('#token').innerText()).resolves.toBe('');
  });
});
