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

  it('counts concurrent requests of several keys one by one: each its own count, the limit exact', async () => {
    const a = await replicaA.newTenantWithKey('app');
    const b = await replicaA.newTenantWithKey('app');
    // All in one minute's window: not in its last seconds.
    const intoMinute = (Date.now() / 1000) % 60;
    if (intoMinute > 55) await new Promise((done) => setTimeout(done, (61 - intoMinute) * 1000));
    const me = (key: string) =>
      replicaA.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    // Sent together, they are counted by group statements (the first alone, the rest together).
    const order = [a, a, b, a, a, a, b, a, a];
    const answers = await Promise.all(order.map((k) => me(k.key)));
    const of = (k: { key: string }) => answers.filter((_, index) => order[index] === k);
    const forA = of(a);
    const forB = of(b);
    expect(forA.map((answer) => answer.statusCode).sort()).toEqual([
      200, 200, 200, 429, 429, 429, 429,
    ]);
    expect(
      forA
        .filter((answer) => answer.statusCode === 200)
        .map((answer) => answer.headers['ratelimit-remaining'])
        .sort(),
    ).toEqual(['0', '1', '2']);
    expect(forB.map((answer) => answer.statusCode)).toEqual([200, 200]);
    expect(forB.map((answer) => answer.headers['ratelimit-remaining']).sort()).toEqual(['1', '2']);
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
