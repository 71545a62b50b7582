import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ProbeModule } from '../support/probe.module.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('errors are problem+json', () => {
  let sut: TestGateway;
  let operatorKey: string;
  beforeAll(async () => {
    sut = await startTestGateway({ BODY_LIMIT_BYTES: '2048' }, [ProbeModule]);
    operatorKey = (await sut.newTenantWithKey('operator')).key;
  });
  afterAll(() => sut.close());

  const expectProblem = (
    response: {
      statusCode: number;
      headers: Record<string, unknown>;
      json(): Record<string, unknown>;
    },
    status: number,
  ) => {
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = response.json();
    expect(body).toMatchObject({ status, requestId: response.headers['x-request-id'] });
    expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(typeof body.type).toBe('string');
    expect(typeof body.title).toBe('string');
    return body;
  };

  it('answers an unknown route with 404', async () => {
    const body = expectProblem(
      await sut.app.inject({ method: 'GET', url: '/v1/no-such-thing?x=1' }),
      404,
    );
    expect(body).toMatchObject({
      type: 'urn:portico:problem:not-found',
      instance: '/v1/no-such-thing',
    });
  });

  it('answers malformed JSON with 400 malformed-body', async () => {
    const response = await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: { ...bearer(operatorKey), 'content-type': 'application/json' },
      payload: '{"slug": "abc",',
    });
    const body = expectProblem(response, 400);
    expect(body.type).toBe('urn:portico:problem:malformed-body');
  });

  it('answers an oversized body with 413', async () => {
    const response = await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: { ...bearer(operatorKey), 'content-type': 'application/json' },
      payload: JSON.stringify({ slug: 'big', name: 'x'.repeat(4096) }),
    });
    const body = expectProblem(response, 413);
    expect(body.type).toBe('urn:portico:problem:body-too-large');
  });

  it('answers an unsupported content type with 415', async () => {
    const response = await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: { ...bearer(operatorKey), 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expectProblem(response, 415);
  });

  it('names every invalid field and why', async () => {
    const response = await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: bearer(operatorKey),
      payload: { slug: 'Not A Slug!', name: '', color: 'red' },
    });
    const body = expectProblem(response, 400);
    expect(body.type).toBe('urn:portico:problem:validation-failed');
    const fields = (body.errors as { field: string; reason: string }[]).map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['slug', 'name', 'color']));
    expect(body.errors).toContainEqual({
      field: 'color',
      reason: 'property color should not exist',
    });
    expect(body.detail).toMatch(/slug/);
  });

  it('validates path parameters', async () => {
    const response = await sut.app.inject({
      method: 'GET',
      url: '/v1/tenants/not-a-uuid/api-keys',
      headers: bearer(operatorKey),
    });
    const body = expectProblem(response, 400);
    expect(body.errors).toContainEqual({ field: 'tenantId', reason: 'tenantId must be a UUID' });
  });

  it('answers a missing tenant with 404', async () => {
    const response = await sut.app.inject({
      method: 'GET',
      url: '/v1/tenants/00000000-0000-4000-8000-000000000000/api-keys',
      headers: bearer(operatorKey),
    });
    expectProblem(response, 404);
  });

  it('answers an unexpected failure with a bare 500 and logs its stack', async () => {
    const response = await sut.app.inject({ method: 'GET', url: '/probe/fail' });
    const body = expectProblem(response, 500);
    expect(Object.keys(body).sort()).toEqual([
      'instance',
      'requestId',
      'status',
      'title',
      'traceId',
      'type',
    ]);
    expect(JSON.stringify(body)).not.toMatch(/exploded|card/);
    const logged = sut.logs
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'unhandled error' && entry.requestId === body.requestId);
    expect(logged?.err?.stack).toMatch(/ProbeController/);
  });
});
