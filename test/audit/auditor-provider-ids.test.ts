import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};

describe("the auditor finds a resource by the provider's id and a tenant by its slug", () => {
  let sut: TestGateway;
  let app: { tenantId: string; slug: string; key: string };
  let auditor: string;
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
    auditor = (await sut.newTenantWithKey('auditor')).key;
  });
  afterAll(() => sut.close());

  const get = (url: string, key = auditor) =>
    sut.app.inject({ method: 'GET', url, headers: bearer(key) });

  it("lists the card resource with a provider's id, and those it is the parent of", async () => {
    const paid = await sut.app.inject({
      method: 'POST',
      url: '/v1/card/payments',
      headers: bearer(app.key),
      payload: { amount: 4000, ...CARD },
    });
    const paymentId = paid.json<{ token: string }>().token;
    const refunded = await sut.app.inject({
      method: 'POST',
      url: '/v1/card/refunds',
      headers: bearer(app.key),
      payload: { payment: paymentId, amount: 1000 },
    });
    const refundId = refunded.json<{ token: string }>().token;

    const all = await get(`/v1/audit/card-resources?providerId=${paymentId}`);
    expect(all.statusCode).toBe(200);
    expect(
      all
        .json<{ items: { token: string; kind: string }[] }>()
        .items.map((item) => [item.kind, item.token])
        .sort(),
    ).toEqual([
      ['payment', paymentId],
      ['refund', refundId],
    ]);
    const payments = await get(`/v1/audit/card-resources?providerId=${paymentId}&kind=payment`);
    expect(payments.json()).toMatchObject({ totalCount: 1, items: [{ token: paymentId }] });
    const refund = await get(`/v1/audit/card-resources?providerId=${refundId}`);
    expect(refund.json()).toMatchObject({ totalCount: 1, items: [{ token: refundId }] });
    expect((await get('/v1/audit/card-resources?providerId=pmt_nobody')).json()).toMatchObject({
      totalCount: 0,
    });
    expect((await get('/v1/audit/card-resources?providerId=pmt%20x')).statusCode).toBe(400);
  });

  it('matches tenantName against the slug as well as the name', async () => {
    const bySlug = await get(`/v1/audit/card-resources?tenantName=${app.slug}`);
    expect(bySlug.statusCode).toBe(200);
    const items = bySlug.json<{ items: { tenantId: string }[] }>().items;
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(item.tenantId).toBe(app.tenantId);
    const upper = await get(`/v1/audit/card-resources?tenantName=${app.slug.toUpperCase()}`);
    expect(upper.json<{ totalCount: number }>().totalCount).toBe(items.length);
  });

  it("offers the provider's id as a search field on the auditor's page", async () => {
    const page = await sut.app.inject({ method: 'GET', url: '/audit' });
    expect(page.body).toContain('id="provider-id"');
    const scripts = await Promise.all(
      [...page.body.matchAll(/<script[^>]+src="([^"]+)"/g)].map(
        async ([, src]) => (await sut.app.inject({ method: 'GET', url: src })).body,
      ),
    );
    expect(scripts.join('\n')).toContain("filters.providerId = $('provider-id').value.trim()");
  });
});
