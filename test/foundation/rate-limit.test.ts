import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

/**
 * The budget is counted per minute of the database's clock (date_trunc('minute', now())): a test's calls
 * start at least 15 s before the minute turns, so that all of them fall in one window.
 */
async function awayFromMinuteEnd(): Promise<void> {
  const intoMinute = (Date.now() / 1000) % 60;
  if (intoMinute > 45) await new Promise((done) => setTimeout(done, (61 - intoMinute) * 1000));
}

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
    await awayFromMinuteEnd();
    const first = await replicaA.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    // Two more on the other replica use up the same budget.
    await replicaB.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    const third = await replicaB.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    expect(third.statusCode).toBe(200);
    expect(third.headers['ratelimit-remaining']).toBe('0');
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
    await awayFromMinuteEnd();
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

  // A creating call without an Idempotency-Key is counted while its body is checked: its first write
  // waits for the count. Over the limit it is refused as if counted first, before anything is written.
  it('refuses a creating call over its limit before it writes or calls the provider, whatever its body', async () => {
    const intoMinute = (Date.now() / 1000) % 60;
    if (intoMinute > 50) await new Promise((done) => setTimeout(done, (61 - intoMinute) * 1000));
    const { tenantId, key } = await replicaA.newTenantWithKey('app');
    const card = {
      cardNumber: '4556390755719395',
      expirationMonth: '12',
      expirationYear: '2031',
      holderName: 'Grace Hopper',
      cvv: '321',
    };
    const pay = (body: object) =>
      replicaA.app.inject({
        method: 'POST',
        url: '/v1/card/payments',
        headers: bearer(key),
        payload: body,
      });
    const made = () => replicaA.sandbox.card.callCounts().createPayment ?? 0;
    const first = await pay({ amount: 500, ...card });
    expect(first.statusCode).toBe(201);
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    // Under the limit, a bad body is its own problem (and counted).
    const bad = await pay({ amount: 'five', ...card });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['ratelimit-remaining']).toBe('1');
    expect((await pay({ amount: 700, ...card })).headers['ratelimit-remaining']).toBe('0');

    const before = made();
    const over = await pay({ amount: 900, ...card });
    expect(over.statusCode).toBe(429);
    expect(over.json().type).toBe('urn:portico:problem:rate-limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    const badOver = await pay({ amount: 'nine', ...card });
    expect(badOver.statusCode).toBe(429);
    expect(made()).toBe(before);
    const rows: { amount: number }[] = await replicaA.dataSource.query(
      "SELECT amount FROM provider_resources WHERE tenant_id = $1 AND kind = 'payment' ORDER BY created_at",
      [tenantId],
    );
    expect(rows.map((row) => Number(row.amount))).toEqual([500, 700]);
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
