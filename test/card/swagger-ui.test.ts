import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { DEMO_TENANT_SLUG, issueSandboxKeys } from '#src/access/tenants/demo-tenant.js';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import { launchBrowser } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('Swagger UI "Try it out" on the card API, for the demo tenant, in Chromium', () => {
  let gateway: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    gateway = await startTestGateway({}, [], { listen: true });
    // What npm start does: the demo tenant and its merchant at this (fresh) sandbox. The key is this
    // test's own: a gateway another test starts in sandbox mode retires the printed demo key.
    await issueSandboxKeys(gateway.tenants);
    const demo = await gateway.tenants.findTenant(DEMO_TENANT_SLUG);
    const { key } = await gateway.tenants.issueKey(demo.id, 'app', 'swagger-ui test');
    await gateway.app.get(CardCredentialsService).ensureSandboxMerchant(demo, true);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${gateway.baseUrl}/docs`);
    await page.locator('.swagger-ui .info').waitFor();
    await page.locator('button.authorize').click();
    await page.locator('.modal-ux input[type=text]').fill(key);
    await page.locator('.modal-ux button.modal-btn.auth.authorize').click();
    await page.locator('.modal-ux button.modal-btn.auth.btn-done').click();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const tryItOut = async (
    operationBlockId: string,
    body?: (example: string) => string,
  ): Promise<{ status: string; body: string }> => {
    const block = page.locator(`#${operationBlockId}`);
    await block.locator('.opblock-summary').click();
    await block.locator('button.try-out__btn').click();
    if (body) {
      const editor = block.locator('textarea.body-param__text');
      await editor.fill(body(await editor.inputValue()));
    }
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

  it('creates a card payment from the example body, then refunds part of it', async () => {
    const created = await tryItOut('operations-Card_payments-createCardPayment');
    expect(created.status).toBe('201');
    const payment = JSON.parse(created.body) as { token: string; status: string; card: object };
    expect(payment.status).toBe('Captured');
    expect(payment.card).toMatchObject({ lastFour: '1111' });
    expect(created.body).not.toContain('4111111111111111');

    const refunded = await tryItOut('operations-Card_refunds-createCardRefund', (example) =>
      JSON.stringify({ ...JSON.parse(example), payment: payment.token, amount: 500 }),
    );
    await page.screenshot({ path: 'test-results/swagger-card-refund.png', fullPage: false });
    expect(refunded.status).toBe('201');
    expect(JSON.parse(refunded.body)).toMatchObject({
      payment: payment.token,
      amount: 500,
      status: 'Captured',
    });
  });
});
