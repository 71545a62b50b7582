import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { approvedConsent } from '../support/consent-flow.js';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// A compliance officer at the auditor's page, in Chromium: log in, find a consent, read its timeline.
describe("the auditor's web page", () => {
  let gateway: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('logs in with an auditor key, finds a consent and shows its transitions, accesses and the chain status', async () => {
    const tenant = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, tenant.key);
    await porticoClient(gateway, tenant.key).GET('/v1/accounts/{accountId}/balances', {
      params: { path: { accountId }, header: { 'Consent-ID': consentId } },
    });
    const auditorKey = (await gateway.newTenantWithKey('auditor')).key;

    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    const answer = await page.goto(`${gateway.baseUrl}/audit`);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");

    await page.locator('#key').fill(tenant.key);
    await page.locator('#login button').click();
    await page.locator('#login-error', { hasText: /Cannot log in: Forbidden/ }).waitFor();

    await page.locator('#key').fill(auditorKey);
    await page.locator('#login button').click();
    await page.locator('#workspace').waitFor();
    // The shared test database is never sealed (sealing is off in tests), so the chain shows broken.
    await page.locator('#chain', { hasText: /^Chain (verified|BROKEN)/ }).waitFor();

    await page.locator('#tenantId').fill(tenant.tenantId);
    await page.locator('#search button').click();
    const row = page.locator(`#results tr[data-id="${consentId}"]`);
    await row.waitFor();
    await row.click();
    await page.locator('#timeline li').first().waitFor();
    const timeline = await page.locator('#timeline li strong').allInnerTexts();
    expect(timeline).toEqual([
      'new → creating',
      'creating → received',
      'received → valid',
      'getAccountBalances: ok (bank 200)',
    ]);
    await expect(page.locator('#detail-title').innerText()).resolves.toBe(`Consent ${consentId}`);
    await page.screenshot({ path: 'test-results/auditor-page.png', fullPage: true });
    // The one failed request the page saw is the app key's refused login.
    expect(errors).toEqual([expect.stringContaining('403')]);
  });
});
