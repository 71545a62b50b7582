import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { consentRequest, domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
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
    const header = { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.10' };
    const api = porticoClient(gateway, key);
    const list = await api.GET('/v1/accounts', { params: { header } });
    expect(list.response.status).toBe(200);
    const [account] = list.data!.accounts;
    const hrefs = Object.values(account._links ?? {}).map(
      (link) => (link as { href: string }).href,
    );
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) expect(href).toMatch(/^\/v1\/accounts\//);
    const balancesHref = (account._links as Record<string, { href: string }>).balances.href;
    const balances = await gateway.app.inject({
      method: 'GET',
      url: balancesHref,
      headers: {
        authorization: `Bearer ${key}`,
        'consent-id': consentId,
        'psu-ip-address': '192.0.2.10',
      },
    });
    expect(balances.statusCode).toBe(200);
    expect(balances.json()).toHaveProperty('balances');
  });

  it('answers 200 to every link it hands out, followed as it stands from the accounts answer on (transactions without dates included)', async () => {
    const { consentId } = await approvedConsent(gateway, key);
    const headers = {
      authorization: `Bearer ${key}`,
      'consent-id': consentId,
      'psu-ip-address': '192.0.2.10',
    };
    const linksIn = (value: unknown, found: string[] = []): string[] => {
      if (value === null || typeof value !== 'object') return found;
      for (const [name, inner] of Object.entries(value)) {
        if (name === '_links')
          for (const link of Object.values(inner as Record<string, { href: string }>))
            found.push(link.href);
        else linksIn(inner, found);
      }
      return found;
    };
    const queue = ['/v1/accounts'];
    const followed = new Map<string, number>();
    while (queue.length > 0 && followed.size < 50) {
      const url = queue.shift() as string;
      if (followed.has(url)) continue;
      const answer = await gateway.app.inject({ method: 'GET', url, headers });
      followed.set(url, answer.statusCode);
      if (answer.statusCode === 200) queue.push(...linksIn(answer.json()));
    }
    const kinds = [...followed.keys()].map((url) => url.split('/').slice(4).join('/') || url);
    expect(kinds).toEqual(expect.arrayContaining(['balances', 'transactions']));
    expect(Object.fromEntries(followed)).toEqual(
      Object.fromEntries([...followed.keys()].map((url) => [url, 200])),
    );
    // Without dates: the 90 days up to today; each date still refused when malformed.
    const bad = await gateway.app.inject({
      method: 'GET',
      url: `${[...followed.keys()].find((url) => url.endsWith('/transactions'))}?dateTo=2026-13-01`,
      headers,
    });
    expect(bad.statusCode).toBe(400);
  });

  it.each([
    'domestic-credit-transfer',
    'sepa-credit-transfer',
    'cross-border-credit-transfer',
  ] as const)(
    'accepts the product spelled without the trailing s (%s) and stores the canonical name',
    async (product) => {
      const body = domesticPayment({ paymentProduct: product });
      if (product !== 'domestic-credit-transfer')
        body.payment = {
          ...body.payment,
          instructedAmount: { currency: 'EUR', amount: '120.00' },
          creditorAccount: { iban: 'DE89370400440532013000' },
          creditorAgent: 'COBADEFFXXX',
          creditorAddress: { country: 'DE', townName: 'Berlin' },
        };
      const created = await porticoClient(gateway, key).POST('/v1/payments', { body });
      expect(created.response.status).toBe(201);
      expect(created.data?.paymentProduct).toBe(`${product}s`);
    },
  );

  it('shows the frequencyPerDay applied when the app asked for none', async () => {
    const { frequencyPerDay: _omitted, ...body } = consentRequest();
    const created = await porticoClient(gateway, key).POST('/v1/consents', { body });
    expect(created.response.status).toBe(201);
    expect(created.data?.frequencyPerDay).toBe(4);
  });
});
