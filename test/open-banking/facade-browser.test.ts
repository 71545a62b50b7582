import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import {
  ALICE,
  ALICE_HUF,
  APP_NOK,
  APP_REDIRECT,
  consentRequest,
  domesticPayment,
  facade,
  inDays,
} from '../support/facade.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('a user authorises through Portico in a real browser', () => {
  let gateway: TestGateway;
  let api: ReturnType<typeof facade>;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    api = facade(gateway, (await gateway.newTenantWithKey('app')).key);
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
    const created = await api.post<{
      consentId: string;
      status: string;
      _links: { scaRedirect: string };
    }>('/v1/consents', consentRequest());
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('received');
    const { consentId } = created.body;

    const returned = await authorise(created.body._links.scaRedirect, 'Approve');
    expect(`${returned.origin}${returned.pathname}`).toBe(APP_REDIRECT);
    expect(Object.fromEntries(returned.searchParams)).toEqual({ consentId, status: 'valid' });

    const consent = await api.get<{
      status: string;
      accounts: { resourceId: string; iban: string }[];
      lastScaAt: string;
    }>(`/v1/consents/${consentId}`);
    expect(consent.body.status).toBe('valid');
    expect(consent.body.accounts.map((a) => a.iban)).toEqual([ALICE_HUF]);
    expect(consent.body.lastScaAt).toEqual(expect.any(String));

    const headers = { 'consent-id': consentId, 'psu-ip-address': '192.0.2.7' };
    const accounts = await api.get<{ accounts: { resourceId: string }[] }>('/v1/accounts', headers);
    expect(accounts.status).toBe(200);
    const accountId = accounts.body.accounts[0].resourceId;
    const balances = await api.get<{ balances: unknown[] }>(
      `/v1/accounts/${accountId}/balances`,
      headers,
    );
    expect(balances.body.balances).toHaveLength(4);
    const transactions = await api.get<{ transactions: { booked: unknown[] } }>(
      `/v1/accounts/${accountId}/transactions?dateFrom=${inDays(-30)}&dateTo=${inDays(0)}`,
      headers,
    );
    expect(transactions.status).toBe(200);
    expect(transactions.body.transactions.booked.length).toBeGreaterThan(0);

    const payment = await api.post<{
      paymentId: string;
      status: string;
      _links: { scaRedirect: string };
    }>('/v1/payments', domesticPayment());
    expect(payment.status).toBe(201);
    expect(payment.body.status).toBe('RCVD');
    const back = await authorise(payment.body._links.scaRedirect, 'Approve', ALICE_HUF);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      paymentId: payment.body.paymentId,
      status: 'ACSC',
    });
    const status = await api.get<{ status: string }>(
      `/v1/payments/${payment.body.paymentId}/status`,
    );
    expect(status.body.status).toBe('ACSC');
  });

  it('a denied consent comes back to the nok address as rejected, and reads are refused', async () => {
    const created = await api.post<{ consentId: string; _links: { scaRedirect: string } }>(
      '/v1/consents',
      consentRequest(),
    );
    const returned = await authorise(created.body._links.scaRedirect, 'Deny');
    expect(`${returned.origin}${returned.pathname}`).toBe(APP_NOK);
    expect(Object.fromEntries(returned.searchParams)).toEqual({
      consentId: created.body.consentId,
      status: 'rejected',
    });
    const read = await api.get('/v1/accounts', {
      'consent-id': created.body.consentId,
      'psu-ip-address': '192.0.2.7',
    });
    expect(read.status).toBe(401);
    expect(read.body).toMatchObject({ code: 'CONSENT_INVALID' });
  });

  it('a denied payment comes back to the nok address as RJCT', async () => {
    const payment = await api.post<{ paymentId: string; _links: { scaRedirect: string } }>(
      '/v1/payments',
      domesticPayment(),
    );
    const back = await authorise(payment.body._links.scaRedirect, 'Deny');
    expect(`${back.origin}${back.pathname}`).toBe(APP_NOK);
    expect(back.searchParams.get('status')).toBe('RJCT');
  });

  it('the return address works once', async () => {
    const created = await api.post<{ consentId: string; _links: { scaRedirect: string } }>(
      '/v1/consents',
      consentRequest(),
    );
    await page.goto(created.body._links.scaRedirect);
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
