import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import type { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';
import { launchBrowser } from '../support/browser.js';
import { callOperation } from '../support/sandbox-api.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

const BRAND = 'danube-bank';
const ALICE_HUF = 'HU75118000170000001234567817';
const ALICE_EUR = 'HU80118000170000001234567824';
const REDIRECTS = {
  'tpp-redirect-uri': 'https://tpp.example/ok',
  'tpp-nok-redirect-uri': 'https://tpp.example/nok',
};
const validUntil = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);

describe('the SCA pages in a real browser (Chromium)', () => {
  let sandbox: RunningSandbox;
  let tpp: UpstreamTransport;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
    tpp = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
    // The fintech app the bank redirects to is outside Portico: answer for it here.
    await page.route('https://tpp.example/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Back at the app</h1>' }),
    );
  });
  afterAll(async () => {
    await browser?.close();
    await tpp?.close();
    await sandbox?.close();
  });

  const createConsent = async (accounts: { iban: string }[]) => {
    const created = await callOperation(tpp, 'createConsent', {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: {
        access: { accounts, balances: accounts, transactions: accounts },
        recurringIndicator: true,
        validUntil,
      },
    });
    return {
      consentId: created.body?.consentId as string,
      href: (created.body as { _links: { scaRedirect: { href: string } } })._links.scaRedirect.href,
    };
  };
  const status = async (consentId: string) =>
    (await callOperation(tpp, 'getConsentStatus', { params: { brandId: BRAND, consentId } })).body
      ?.consentStatus;
  const logIn = async (href: string) => {
    await page.goto(href);
    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('alice-pass');
    await page.getByRole('button', { name: /log in|sign in|continue/i }).click();
  };

  it('approves a consent: the user logs in, sees what is asked, approves, and lands at the app', async () => {
    const { consentId, href } = await createConsent([{ iban: ALICE_HUF }]);
    await logIn(href);
    await expect(page.getByText(ALICE_HUF).first().isVisible()).resolves.toBe(true);
    await page.screenshot({ path: 'test-results/sca-review.png', fullPage: true });
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/^https:\/\/tpp\.example\/ok/);
    expect(await status(consentId)).toBe('valid');
  });

  it('denies a consent: the user lands at the nok address and the consent is rejected', async () => {
    const { consentId, href } = await createConsent([{ iban: ALICE_HUF }]);
    await logIn(href);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(/^https:\/\/tpp\.example\/nok/);
    expect(await status(consentId)).toBe('rejected');
  });

  it('lets the user choose the accounts of a bank-offered consent', async () => {
    const { consentId, href } = await createConsent([]);
    await logIn(href);
    await page.screenshot({ path: 'test-results/sca-choose-accounts.png', fullPage: true });
    await page.getByLabel(new RegExp(ALICE_EUR)).check();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/^https:\/\/tpp\.example\/ok/);
    expect(await status(consentId)).toBe('valid');
    const accounts = await callOperation<{ accounts: { iban: string }[] }>(tpp, 'listAccounts', {
      params: { brandId: BRAND },
      headers: { 'consent-id': consentId, 'psu-ip-address': '192.0.2.1' },
    });
    expect(accounts.body?.accounts.map((a) => a.iban)).toEqual([ALICE_EUR]);
  });

  it('refuses wrong credentials with the login form and an error', async () => {
    const { href } = await createConsent([{ iban: ALICE_HUF }]);
    await page.goto(href);
    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: /log in|sign in|continue/i }).click();
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    expect(await page.content()).toMatch(/incorrect|wrong|invalid|not recognised/i);
  });
});
