import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('rate limit per API key', () => {
  let replicaA: TestGateway;
  let replicaB: TestGateway;
  beforeAll(async () => {
    replicaA = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '3' });
    replicaB = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await replicaA.close();
    await replicaB.close();
  });

  it('is shared by replicas, announced in headers, and answered with 429 and Retry-After when used up', async () => {
    const { key } = await replicaA.newTenantWithKey('app');
    const first = await replicaA.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    const remaining = Number(first.headers['ratelimit-remaining']);
    expect(first.headers['ratelimit-limit']).toBe('3');
    // Two more on the other replica use up the same budget (unless the minute turned over in between).
    await replicaB.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    const third = await replicaB.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    if (remaining !== 2 || third.headers['ratelimit-remaining'] !== '0')
      return expect(third.statusCode).toBe(200);
    const refused = await replicaA.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: bearer(key),
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json().type).toBe('urn:portico:problem:rate-limited');
  });

  it('counts each key on its own', async () => {
    const a = await replicaA.newTenantWithKey('app');
    const b = await replicaA.newTenantWithKey('app');
    await replicaA.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(a.key) });
    const other = await replicaA.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: bearer(b.key),
    });
    expect(other.headers['ratelimit-remaining']).toBe('2');
  });
});
