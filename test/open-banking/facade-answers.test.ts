import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { consentRequest, domesticPayment, facade } from '../support/facade.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('what the facade answers is usable as it stands', () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key } = await gateway.newTenantWithKey('app'));
  });
  afterAll(() => gateway.close());

  it("rewrites the bank's account links to Portico's own routes, and they answer", async () => {
    const { consentId } = await approvedConsent(gateway, key);
    const headers = { 'consent-id': consentId, 'psu-ip-address': '192.0.2.10' };
    const list = await facade(gateway, key).get<{
      accounts: { resourceId: string; _links: Record<string, { href: string }> }[];
    }>('/v1/accounts', headers);
    expect(list.status).toBe(200);
    const [account] = list.body.accounts;
    const hrefs = Object.values(account._links).map((link) => link.href);
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) expect(href).toMatch(/^\/v1\/accounts\//);
    const balances = await facade(gateway, key).get(account._links.balances.href, headers);
    expect(balances.status).toBe(200);
    expect(balances.body).toHaveProperty('balances');
  });

  it.each(['domestic-credit-transfer', 'sepa-credit-transfer', 'cross-border-credit-transfer'])(
    'accepts the product spelled without the trailing s (%s) and stores the canonical name',
    async (product) => {
      const sepaLike = product !== 'domestic-credit-transfer';
      const payment = domesticPayment({ paymentProduct: product }) as {
        payment: Record<string, unknown>;
      };
      if (sepaLike)
        payment.payment = {
          ...payment.payment,
          instructedAmount: { currency: 'EUR', amount: '120.00' },
          creditorAccount: { iban: 'DE89370400440532013000' },
          creditorAgent: 'COBADEFFXXX',
          creditorAddress: { country: 'DE', townName: 'Berlin' },
        };
      const created = await facade(gateway, key).post<{ paymentProduct: string }>(
        '/v1/payments',
        payment,
      );
      expect(created.status).toBe(201);
      expect(created.body.paymentProduct).toBe(`${product}s`);
    },
  );

  it('shows the frequencyPerDay applied when the app asked for none', async () => {
    const { frequencyPerDay: _omitted, ...request } = consentRequest();
    const created = await facade(gateway, key).post<{ frequencyPerDay: number | null }>(
      '/v1/consents',
      request,
    );
    expect(created.status).toBe(201);
    expect(created.body.frequencyPerDay).toBe(4);
  });
});
