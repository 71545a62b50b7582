import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};

describe('Idempotency-Key through the facade, as Stripe keeps it', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const post = (url: string, payload: object, idempotencyKey: string) =>
    sut.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { ...bearer(app.key), 'idempotency-key': idempotencyKey },
    });

  it('keeps nothing for a payment refused by validation: the corrected payment goes through under the same key', async () => {
    const key = randomUUID();
    const refused = await post('/v1/card/payments', { ...CARD, amount: '10.99' }, key);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ type: 'urn:portico:problem:validation-failed' });
    const corrected = await post('/v1/card/payments', { ...CARD, amount: 1099 }, key);
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    const repeat = await post('/v1/card/payments', { ...CARD, amount: 1099 }, key);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json().token).toBe(corrected.json().token);
    // The key now belongs to the payment: another body under it is refused.
    expect((await post('/v1/card/payments', { ...CARD, amount: 5 }, key)).statusCode).toBe(422);
  });

  it('makes one webhook endpoint for a key sent twice, answering the repeat with the same endpoint and secret, never storing the secret with the key', async () => {
    const key = randomUUID();
    const body = {
      url: 'https://app.example.com/hooks',
      eventTypes: ['card_payment.status_changed'],
    };
    const first = await post('/v1/webhooks/endpoints', body, key);
    expect(first.statusCode).toBe(201);
    const repeat = await post('/v1/webhooks/endpoints', body, key);
    expect(repeat.statusCode).toBe(201);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json()).toEqual(first.json());
    const listed = await sut.app.inject({
      method: 'GET',
      url: '/v1/webhooks/endpoints',
      headers: bearer(app.key),
    });
    expect(listed.json().items).toHaveLength(1);
    const [record] = (await sut.dataSource.query(
      'SELECT resource, response_body FROM idempotency_records WHERE tenant_id = $1 AND key = $2',
      [app.tenantId, key],
    )) as { resource: string; response_body: unknown }[];
    expect(record.resource).toBe(`/v1/webhooks/endpoints/${first.json().id}`);
    expect(JSON.stringify(record.response_body ?? null)).not.toContain('whsec_');
    // Another body under the key is refused; a new key makes another endpoint.
    const other = await post('/v1/webhooks/endpoints', { ...body, description: 'x' }, key);
    expect(other.statusCode).toBe(422);
    expect((await post('/v1/webhooks/endpoints', body, randomUUID())).statusCode).toBe(201);
  });
});
