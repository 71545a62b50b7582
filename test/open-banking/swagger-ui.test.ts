import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('Swagger UI "Try it out" against the sandbox, in Chromium', () => {
  let gateway: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    key = (await gateway.newTenantWithKey('app')).key;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${gateway.baseUrl}/docs`);
    await page.locator('.swagger-ui .info').waitFor();
    await page.locator('button.authorize').click();
    await page.locator('.modal-ux input[type=text]').fill(key);
    await page.locator('.modal-ux button.modal-btn.auth.authorize').click();
    await page.locator('.modal-ux button.modal-btn.auth.btn-done').click();
    // A gateway, Chromium and Swagger UI's first render: over a minute on a machine running the other
    // tiers as well.
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const tryItOut = async (operationBlockId: string): Promise<{ status: string; body: string }> => {
    const block = page.locator(`#${operationBlockId}`);
    await block.locator('.opblock-summary').click();
    await block.locator('button.try-out__btn').click();
    await block.locator('button.execute').click();
    const status = block.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    return {
      status: (await status.innerText()).trim(),
      body: await block
        .locator('.live-responses-table .response-col_description pre')
        .first()
        .innerText(),
    };
  };

  it('lists the brands with the API key given in the Authorize dialog', async () => {
    const { status, body } = await tryItOut('operations-Brands-listBrands');
    expect(status).toBe('200');
    expect(body).toContain('danube-bank');
  });

  it('creates a consent from the example body and shows the SCA link', async () => {
    const { status, body } = await tryItOut(
      'operations-Account-information_consents-createConsent',
    );
    await page.screenshot({ path: 'test-results/swagger-create-consent.png', fullPage: false });
    expect(status).toBe('201');
    expect(body).toContain('"status": "received"');
    expect(body).toContain('scaRedirect');
  });
});
