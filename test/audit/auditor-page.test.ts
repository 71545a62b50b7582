import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ReconciliationService } from '#src/reconciliation/reconciliation.service.js';
import { launchBrowser } from '../support/browser.js';
import { approvedConsent } from '../support/consent-flow.js';
import { porticoClient } from '../support/inject-fetch.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { ibanOf } from '../support/marketplace.js';
import { terminals } from '../support/pos-gateway.js';

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

    await page.locator('#tenant').fill(tenant.tenantId);
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

  it('lists tenants by name only, and shows every kind the API shows, filtered by a tenant name, with a screenshot', async () => {
    const suffix = randomBytes(3).toString('hex');
    const named = async (name: string) => {
      const tenant = await gateway.tenants.createTenant(
        `t-${randomBytes(5).toString('hex')}`,
        name,
      );
      const { key } = await gateway.tenants.issueKey(tenant.id, 'app');
      const [row] = (await gateway.dataSource.query(
        'SELECT merchant_id FROM card_credentials WHERE tenant_id = $1',
        [tenant.id],
      )) as { merchant_id: string }[];
      return { tenantId: tenant.id, key, merchantId: row.merchant_id, name };
    };
    const alpha = await named(`Kiosk Alpha ${suffix}`);
    const beta = await named(`Kiosk Beta ${suffix}`);
    const ok = async (key: string, url: string, payload: object) => {
      const answer = await gateway.app.inject({
        method: 'POST',
        url,
        headers: bearer(key),
        payload,
      });
      if (answer.statusCode !== 201 && answer.statusCode !== 200)
        throw new Error(`${url}: ${answer.statusCode} ${answer.body}`);
      return answer.json<Record<string, string>>();
    };
    const card = {
      cardNumber: '5217925525906273',
      expirationMonth: '12',
      expirationYear: '2031',
      holderName: 'Ada Lovelace',
      cvv: '123',
    };
    // One of each kind for Alpha, through the facade; a card payment for Beta.
    const payment = await ok(alpha.key, '/v1/card/payments', { amount: 4200, ...card });
    const refund = await ok(alpha.key, '/v1/card/refunds', { payment: payment.token, amount: 700 });
    const notification = await ok(alpha.key, '/v1/card/notifications', {
      payeeName: 'Eleni Georgiou',
      payeeEmail: 'eleni@example.com',
      payeePhone: '+306900000001',
      amount: 2500,
      description: 'Invoice 42',
    });
    const iris = await ok(alpha.key, '/v1/card/iris/sessions', {
      amount: 1800,
      country: 'GR',
      returnUrl: 'https://kiosk.example/done',
    });
    const [terminal] = terminals(gateway, alpha);
    const pos = await ok(alpha.key, '/v1/pos/transactions', {
      transactionId: randomUUID(),
      amount: 1240,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    });
    const seller = await ok(alpha.key, '/v1/marketplace/sellers', {
      email: 'seller@kiosk.example',
      contactPhone: '+306900000000',
      description: 'Kiosk seller',
      business: {
        name: 'Kiosk',
        title: 'Kiosk S.A.',
        taxNumber: 'EL200000001',
        address: 'Ermou 12, Athens',
      },
      bankAccount: {
        iban: ibanOf('GR', `0110125${'7'.padStart(16, '0')}`),
        beneficiaryName: 'Kiosk',
      },
    });
    const betaPayment = await ok(beta.key, '/v1/card/payments', { amount: 990, ...card });
    const auditorKey = (await gateway.newTenantWithKey('auditor')).key;

    // The API: ids and names, nothing else; an app key may not list tenants.
    const list = await gateway.app.inject({
      method: 'GET',
      url: `/v1/audit/tenants?name=${encodeURIComponent(`kiosk % ${suffix}`)}`,
      headers: bearer(auditorKey),
    });
    expect(list.json()).toMatchObject({ totalCount: 0, items: [] });
    const listed = await gateway.app.inject({
      method: 'GET',
      url: `/v1/audit/tenants?name=${suffix.toUpperCase()}`,
      headers: bearer(auditorKey),
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      page: 1,
      pageSize: 200,
      totalCount: 2,
      items: [
        { id: alpha.tenantId, name: alpha.name },
        { id: beta.tenantId, name: beta.name },
      ],
    });
    const refused = await gateway.app.inject({
      method: 'GET',
      url: '/v1/audit/tenants',
      headers: bearer(alpha.key),
    });
    expect(refused.statusCode).toBe(403);

    const browserErrors: string[] = [];
    page.on(
      'console',
      (message) => message.type() === 'error' && browserErrors.push(message.text()),
    );
    await page.goto(`${gateway.baseUrl}/audit`);
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    await page.locator('#key').fill(auditorKey);
    await page.locator('#login button').click();
    await page.locator('#workspace').waitFor();

    await page.locator('#tenant').fill(alpha.name);
    const expected: [string, string, string][] = [
      ['card:payment', payment.token, 'Partially Refunded'],
      ['card:refund', refund.token, refund.status],
      ['card:notification', notification.token, notification.status],
      ['card:iris_session', iris.token, ''],
      ['card:pos_payment', pos.transactionId, 'CAPTURED'],
      ['card:seller', seller.token, ''],
    ];
    for (const [kind, shownId, status] of expected) {
      await page.locator('#kind').selectOption(kind);
      await page.locator('#search button').click();
      expect(shownId).toMatch(/^\S{8,}$/);
      const row = page.locator('#results tbody tr', { hasText: shownId });
      await row.waitFor();
      await expect(page.locator('#total').innerText()).resolves.toBe('(1)');
      const cells = await row.locator('td').allInnerTexts();
      expect({ kind, id: cells[1], tenant: cells[2] }).toEqual({
        kind,
        id: shownId,
        tenant: alpha.name,
      });
      if (status) expect(cells[4]).toBe(status);
    }

    // Beta's name shows Beta's payment only; then the detail of Alpha's payment, by name.
    await page.locator('#kind').selectOption('card:payment');
    await page.locator('#tenant').fill(beta.name);
    await page.locator('#search button').click();
    await page.locator('#results tbody tr td', { hasText: betaPayment.token }).waitFor();
    await expect(page.locator('#total').innerText()).resolves.toBe('(1)');

    await page.locator('#tenant').fill(alpha.name);
    await page.locator('#search button').click();
    await page.locator('#results tbody tr td', { hasText: payment.token }).click();
    await page.locator('#timeline li').first().waitFor();
    await expect(page.locator('#detail-title').innerText()).resolves.toBe(
      `Card payment ${payment.token}`,
    );
    const facts = await page.locator('#detail-facts').innerText();
    expect(facts).toContain(alpha.name);
    expect(facts).toContain('€42.00');
    const timeline = await page.locator('#timeline li strong').allInnerTexts();
    expect(timeline).toEqual([
      'new → creating',
      'createPayment: ok (provider 200)',
      'creating → Captured',
      'retrievePayment: ok (provider 200)',
      'Captured → Partially Refunded',
    ]);
    // Reconciliation: a run of Alpha's customers finds one the provider never made; the run, then the drift.
    const phantom = `cus_${suffix}notmade`;
    await gateway.dataSource.query(
      `INSERT INTO provider_resources (id, tenant_id, kind, token, status, data)
       VALUES ($1, $2, 'customer', $3, 'active', '{}')`,
      [randomUUID(), alpha.tenantId, phantom],
    );
    const day = new Date().toISOString().slice(0, 10);
    const run = await gateway.app
      .get(ReconciliationService)
      .run({ tenantId: alpha.tenantId, capability: 'customers', from: day, to: day }, 'on-demand');
    expect(run?.status).toBe('succeeded');
    await page.locator('#kind').selectOption('reconciliation:runs');
    await page.locator('#search button').click();
    const runRow = page.locator(`#results tr[data-id="${run!.id}"]`);
    await runRow.waitFor();
    await expect(page.locator('#total').innerText()).resolves.toBe('(1)');
    const runCells = await runRow.locator('td').allInnerTexts();
    expect(runCells.slice(1)).toEqual([
      `customers ${day}`,
      alpha.name,
      'Run, on-demand',
      'succeeded',
      '1 drift',
    ]);
    await runRow.click();
    await page.locator('#detail-title', { hasText: 'Reconciliation run' }).waitFor();
    await expect(page.locator('#detail-title').innerText()).resolves.toBe(
      `Reconciliation run customers ${day} to ${day}`,
    );
    await page.locator('#timeline li').first().waitFor();
    await expect(page.locator('#timeline li strong').allInnerTexts()).resolves.toEqual([
      `portico-only: Customer ${phantom}`,
    ]);
    await page.locator('#kind').selectOption('reconciliation:drifts');
    await page.locator('#status').fill('portico-only');
    await page.locator('#search button').click();
    const driftRow = page.locator('#results tbody tr', { hasText: phantom });
    await driftRow.waitFor();
    await expect(page.locator('#total').innerText()).resolves.toBe('(1)');
    expect((await driftRow.locator('td').allInnerTexts()).slice(2)).toEqual([
      alpha.name,
      'Drift of a customer',
      'portico-only',
      '',
    ]);
    await driftRow.click();
    await page.locator('#detail-title', { hasText: 'Drift' }).waitFor();
    await expect(page.locator('#detail-title').innerText()).resolves.toBe(
      `Drift portico-only ${phantom}`,
    );
    const driftFacts = await page.locator('#detail-facts').innerText();
    expect(driftFacts).toContain('status active');
    expect(driftFacts).toContain('not found at the provider');
    await page.locator('#status').fill('');
    const screenshot = join(mkdtempSync(join(tmpdir(), 'portico-auditor-')), 'auditor-kinds.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    // eslint-disable-next-line no-console
    console.log(`auditor page screenshot: ${screenshot}`);
    expect(browserErrors).toEqual([]);
  });

  it("shows an open-banking drift with its consent's history and bank calls", async () => {
    const tenant = await gateway.newTenantWithKey('app');
    const { consentId } = await approvedConsent(gateway, tenant.key);
    const [{ bank }] = (await gateway.dataSource.query(
      'SELECT upstream_consent_id AS bank FROM consents WHERE id = $1',
      [consentId],
    )) as { bank: string }[];
    // The bank forgets the consent, outside Portico: reconciliation flags it, portico-only.
    const forgotten = await fetch(`${gateway.sandbox.scaUrl}/sandbox/consents/${bank}`, {
      method: 'DELETE',
    });
    expect(forgotten.status).toBe(204);
    const day = new Date().toISOString().slice(0, 10);
    const run = await gateway.app
      .get(ReconciliationService)
      .run(
        { tenantId: tenant.tenantId, capability: 'open-banking', from: day, to: day },
        'on-demand',
      );
    expect(run?.counts).toMatchObject({ 'portico-only': 1, adopted: 0 });
    await page.locator('#tenant').fill(tenant.tenantId);
    await page.locator('#kind').selectOption('reconciliation:drifts');
    await page.locator('#search button').click();
    const driftRow = page.locator('#results tbody tr', { hasText: bank });
    await driftRow.waitFor();
    await expect(driftRow.innerText()).resolves.toContain('Drift of a consent');
    await driftRow.click();
    await page.locator('#detail-title', { hasText: `Drift portico-only ${bank}` }).waitFor();
    await page.locator('#timeline li').first().waitFor();
    await expect(page.locator('#timeline li strong').allInnerTexts()).resolves.toEqual([
      'new → creating',
      'creating → received',
      'received → valid',
      'getConsentStatus: upstream:CONSENT_UNKNOWN (bank 403)',
    ]);
  });
});
