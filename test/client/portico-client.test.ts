import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('the typed Portico client (src/client)', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('sends the API key on every call and reads the answer as the spec types it', async () => {
    const { key, keyId, tenantId, slug } = await gateway.newTenantWithKey('app');
    const sut = porticoClient(gateway, key);
    const { data, error, response } = await sut.GET('/v1/me');
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    expect(data).toEqual({ keyId, tenantId, tenantSlug: slug, role: 'app' });
  });

  it('gives a refusal as the problem body in `error`, keeping the caller’s own headers', async () => {
    const sut = porticoClient(gateway, 'ptk_unknown_key');
    const requestId = randomUUID();
    const { data, error, response } = await sut.GET('/v1/me', {
      headers: { 'X-Request-ID': requestId },
    });
    expect(response.status).toBe(401);
    expect(data).toBeUndefined();
    expect(error).toMatchObject({
      type: 'urn:portico:problem:unauthenticated',
      status: 401,
      detail: 'The API key is unknown or revoked',
      requestId,
    });
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
