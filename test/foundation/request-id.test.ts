import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('X-Request-ID', () => {
  let sut: TestGateway;
  let key: string;
  beforeAll(async () => {
    sut = await startTestGateway();
    key = (await sut.newTenantWithKey('app')).key;
  });
  afterAll(() => sut.close());

  it("echoes the caller's UUID on success and in error bodies", async () => {
    const id = randomUUID();
    const ok = await sut.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { ...bearer(key), 'x-request-id': id },
    });
    expect(ok.headers['x-request-id']).toBe(id);
    const failed = await sut.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { 'x-request-id': id },
    });
    expect(failed.headers['x-request-id']).toBe(id);
    expect(failed.json().requestId).toBe(id);
  });

  it('replaces an id that is not a UUID, and makes one when none is sent', async () => {
    const replaced = await sut.app.inject({
      method: 'GET',
      url: '/health/live',
      headers: { 'x-request-id': 'drop table; --' },
    });
    expect(replaced.headers['x-request-id']).toMatch(UUID);
    expect(replaced.headers['x-request-id']).not.toBe('drop table; --');
    const made = await sut.app.inject({ method: 'GET', url: '/health/live' });
    expect(made.headers['x-request-id']).toMatch(UUID);
  });

  it('puts the id on every log line about the request, including those logged inside the handler', async () => {
    const id = randomUUID();
    await sut.app.inject({
      method: 'GET',
      url: '/v1/tenants',
      headers: { ...bearer(key), 'x-request-id': id },
    });
    const lines = sut.logs
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.requestId === id);
    expect(lines.map((entry) => entry.msg)).toContain('request completed');
    const completed = lines.find((entry) => entry.msg === 'request completed');
    expect(completed).toMatchObject({ method: 'GET', path: '/v1/tenants', status: 403 });
  });
});
