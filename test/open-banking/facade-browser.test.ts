import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { createPorticoClient, type PorticoClient } from '#src/client/portico-client.js';
import { launchBrowser } from '../support/browser.js';
import {
  ALICE,
  ALICE_HUF,
  APP_NOK,
  APP_REDIRECT,
  consentRequest,
  domesticPayment,
  inDays,
} from '../support/fixtures.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('a user authorises through Portico in a real browser', () => {
  let gateway: TestGateway;
  let api: PorticoClient;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    // This gateway listens: the typed client calls it over HTTP with the global fetch, as an app would.
    api = createPorticoClient({
      baseUrl: gateway.baseUrl,
      apiKey: (await gateway.newTenantWithKey('app')).key,
    });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
    // The fintech app is outside Portico: answer for it in the browser.
    await page.route('https://app.example/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Back in the app</h1>' }),
    );
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const authorise = async (href: string, decision: 'Approve' | 'Deny', debtorIban?: string) => {
    await page.goto(href);
    await page.getByLabel('User name').fill(ALICE.username);
    await page.getByLabel('Password').fill(ALICE.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    if (debtorIban) await page.getByLabel(new RegExp(debtorIban)).check();
    await page.getByRole('button', { name: decision }).click();
    await page.waitForURL(/^https:\/\/app\.example\//);
    return new URL(page.url());
  };

  it('consent, approval at the bank, back at the app, accounts read, payment approved to ACSC', async () => {
    const created = await api.POST('/v1/consents', { body: consentRequest() });
    expect(created.response.status).toBe(201);
    expect(created.data!.status).toBe('received');
    const { consentId } = created.data!;

    const returned = await authorise(created.data!._links.scaRedirect!, 'Approve');
    expect(`${returned.origin}${returned.pathname}`).toBe(APP_REDIRECT);
    expect(Object.fromEntries(returned.searchParams)).toEqual({ consentId, status: 'valid' });

    const consent = await api.GET('/v1/consents/{consentId}', {
      params: { path: { consentId } },
    });
    expect(consent.data!.status).toBe('valid');
    expect(consent.data!.accounts.map((a) => a.iban)).toEqual([ALICE_HUF]);
    expect(consent.data!.lastScaAt).toEqual(expect.any(String));

    const header = { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.7' };
    const accounts = await api.GET('/v1/accounts', { params: { header } });
    expect(accounts.response.status).toBe(200);
    const accountId = accounts.data!.accounts[0].resourceId!;
    const balances = await api.GET('/v1/accounts/{accountId}/balances', {
      params: { header, path: { accountId } },
    });
    expect(balances.data!.balances).toHaveLength(4);
    const transactions = await api.GET('/v1/accounts/{accountId}/transactions', {
      params: { header, path: { accountId }, query: { dateFrom: inDays(-30), dateTo: inDays(0) } },
    });
    expect(transactions.response.status).toBe(200);
    expect(transactions.data!.transactions!.booked!.length).toBeGreaterThan(0);

    const payment = await api.POST('/v1/payments', { body: domesticPayment() });
    expect(payment.response.status).toBe(201);
    expect(payment.data!.status).toBe('RCVD');
    const { paymentId } = payment.data!;
    const back = await authorise(payment.data!._links.scaRedirect!, 'Approve', ALICE_HUF);
    expect(Object.fromEntries(back.searchParams)).toEqual({ paymentId, status: 'ACSC' });
    const status = await api.GET('/v1/payments/{paymentId}/status', {
      params: { path: { paymentId } },
    });
    expect(status.data!.status).toBe('ACSC');
  });

  it('a denied consent comes back to the nok address as rejected, and reads are refused', async () => {
    const created = await api.POST('/v1/consents', { body: consentRequest() });
    const { consentId } = created.data!;
    const returned = await authorise(created.data!._links.scaRedirect!, 'Deny');
    expect(`${returned.origin}${returned.pathname}`).toBe(APP_NOK);
    expect(Object.fromEntries(returned.searchParams)).toEqual({ consentId, status: 'rejected' });
    const read = await api.GET('/v1/accounts', {
      params: { header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.7' } },
    });
    expect(read.response.status).toBe(401);
    expect(read.error).toMatchObject({ code: 'CONSENT_INVALID' });
  });

  it('a denied payment comes back to the nok address as RJCT', async () => {
    const payment = await api.POST('/v1/payments', { body: domesticPayment() });
    const back = await authorise(payment.data!._links.scaRedirect!, 'Deny');
    expect(`${back.origin}${back.pathname}`).toBe(APP_NOK);
    expect(back.searchParams.get('status')).toBe('RJCT');
  });

  it('the return address works once', async () => {
    const created = await api.POST('/v1/consents', { body: consentRequest() });
    await page.goto(created.data!._links.scaRedirect!);
    await page.getByLabel('User name').fill(ALICE.username);
    await page.getByLabel('Password').fill(ALICE.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    const [callback] = await Promise.all([
      page.waitForRequest((r) => r.url().includes('/v1/sca/callback/')),
      page.getByRole('button', { name: 'Approve' }).click(),
    ]);
    await page.waitForURL(/^https:\/\/app\.example\//);
    const again = await fetch(callback.url(), { redirect: 'manual' });
    expect(again.status).toBe(410);
    expect(again.headers.get('content-type')).toMatch(/problem\+json/);
  });
});
