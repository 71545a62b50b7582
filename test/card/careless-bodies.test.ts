import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};

describe('bodies a careless client sends', () => {
  let sut: TestGateway;
  let app: { key: string; tenantId: string };
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const send = (url: string, contentType: string, payload: string) =>
    sut.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(app.key), 'content-type': contentType },
      payload,
    });

  it('takes an empty body sent as application/json as no body on a call whose body is optional (a capture)', async () => {
    const created = await sut.app.inject({
      method: 'POST',
      url: '/v1/card/payments',
      headers: bearer(app.key),
      payload: { amount: 2500, capture: 0, ...CARD },
    });
    expect(created.json()).toMatchObject({ status: 'Pre Authorized' });
    const token = created.json<{ token: string }>().token;
    const captured = await send(`/v1/card/payments/${token}/capture`, 'application/json', '');
    expect(captured.statusCode).toBe(200);
    expect(captured.json()).toMatchObject({ token, status: 'Captured' });
  });

  it('still refuses an empty body where one is required, and malformed JSON, as problems', async () => {
    const empty = await send('/v1/card/payments', 'application/json', '');
    expect(empty.statusCode).toBe(400);
    expect(empty.headers['content-type']).toMatch(/^application\/problem\+json/);
    const malformed = await send('/v1/card/payments', 'application/json', '{"amount":');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ type: 'urn:portico:problem:malformed-body' });
  });

  it('answers a form-encoded body on a JSON route 415 naming application/json, before reading it', async () => {
    const form = await send(
      '/v1/card/payments',
      'application/x-www-form-urlencoded',
      'amount=1099&cardNumber=5217925525906273&expirationMonth=12&expirationYear=2031&cvv=123',
    );
    expect(form.statusCode).toBe(415);
    expect(form.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(form.json()).toMatchObject({
      type: 'urn:portico:problem:unsupported-media-type',
      title: 'Unsupported Media Type',
      status: 415,
      detail: expect.stringContaining('application/json'),
      instance: '/v1/card/payments',
    });
    const text = await send('/v1/card/payments', 'text/plain', 'amount=1099');
    expect(text.statusCode).toBe(415);
    expect(text.json().detail).toContain('application/json');
    // Nothing was made: the tenant has only the payment of the first test.
    const [{ payments }] = await sut.dataSource.query(
      `SELECT count(*)::int AS payments FROM provider_resources WHERE tenant_id = $1 AND kind = 'payment'`,
      [app.tenantId],
    );
    expect(payments).toBe(1);
  });
});
