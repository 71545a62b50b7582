import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { earlyRefusal } from '#src/platform/errors/framework-errors.js';
import { PROBE_IBAN, ProbeModule } from '../support/probe.module.js';
import { rawRequest, type RawAnswer } from '../support/raw-http.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** A problem+json answer with this status, whose body carries the request id of its header. */
function expectProblem(answer: Answer, status: number): Record<string, unknown> {
  expect({ status: answer.statusCode, body: answer.body.slice(0, 300) }).toMatchObject({ status });
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).toMatchObject({ status, requestId: answer.headers['x-request-id'] });
  expect(body.requestId).toMatch(UUID);
  expect(typeof body.type).toBe('string');
  expect(typeof body.title).toBe('string');
  expect(typeof body.instance).toBe('string');
  return body;
}

const fromRaw = (raw: RawAnswer): Answer => ({
  statusCode: raw.status,
  headers: raw.headers,
  body: raw.body,
});

describe('hostile input', () => {
  let sut: TestGateway;
  let port: number;
  let app: string;
  let operator: { key: string; tenantId: string };
  let auditor: string;
  beforeAll(async () => {
    sut = await startTestGateway({ BODY_LIMIT_BYTES: '65536' }, [ProbeModule], { listen: true });
    port = Number(new URL(sut.baseUrl).port);
    app = (await sut.newTenantWithKey('app')).key;
    operator = await sut.newTenantWithKey('operator');
    auditor = (await sut.newTenantWithKey('auditor')).key;
  });
  afterAll(() => sut.close());

  const consentId = randomUUID();
  /** The six operations that take a body, each with a key that gets past its guard. */
  const bodyOperations = () => [
    { url: '/v1/consents', key: app },
    { url: '/v1/funds-confirmation-consents', key: app },
    { url: '/v1/funds-confirmations', key: app },
    { url: '/v1/payments', key: app },
    { url: '/v1/tenants', key: operator.key },
    { url: `/v1/tenants/${operator.tenantId}/api-keys`, key: operator.key },
  ];
  const post = (url: string, key: string, payload: string) =>
    sut.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(key), 'content-type': 'application/json', 'consent-id': consentId },
      payload,
    });

  it('answers a body nested 2,000 deep with 400 on every body operation, arrays and objects alike', async () => {
    const deepArray = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    const deepObject = `{"access":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`;
    for (const { url, key } of bodyOperations()) {
      for (const payload of [deepArray, deepObject]) {
        const body = expectProblem(await post(url, key, payload), 400);
        expect([url, body.type]).toEqual([url, 'urn:portico:problem:malformed-body']);
        expect(body.detail).toContain('deeper than 64 levels');
      }
    }
    // 64 levels are still a body (refused for what it says, not for its depth).
    const sixtyFour = `{"slug":${'['.repeat(63)}${']'.repeat(63)}}`;
    const body = expectProblem(await post('/v1/tenants', operator.key, sixtyFour), 400);
    expect(body.type).toBe('urn:portico:problem:validation-failed');
  });

  it('refuses a lone UTF-16 surrogate and a NUL in a string with 400 naming the field', async () => {
    const payment = (creditorName: string) =>
      `{"brandId":"danube-bank","paymentProduct":"sepa-credit-transfers","redirectUri":"http://localhost:9999/back","payment":{"debtorAccount":{"iban":"HU80118000170000001234567824"},"instructedAmount":{"currency":"EUR","amount":"1.00"},"creditorAccount":{"iban":"DE89370400440532013000"},"creditorName":"${creditorName}"}}`;
    for (const [text, reason] of [
      ['\\ud800', /lone UTF-16 surrogate/],
      ['tail \\udc00', /lone UTF-16 surrogate/],
      ['nul\\u0000', /U\+0000/],
    ] as const) {
      const body = expectProblem(await post('/v1/payments', app, payment(text)), 400);
      expect(body).toMatchObject({
        type: 'urn:portico:problem:validation-failed',
        detail: 'The request body has 1 invalid field: payment.creditorName',
      });
      expect(body.errors).toEqual([{ field: 'payment.creditorName', reason: expect.any(String) }]);
      expect((body.errors as { reason: string }[])[0].reason).toMatch(reason);
    }
    // A surrogate pair is a character like any other.
    const pair = await post(
      '/v1/tenants',
      operator.key,
      '{"slug":"emoji","name":"\\ud83d\\ude00"}',
    );
    expect(pair.statusCode).not.toBe(400);
  });

  it('refuses a null label on key issue with 400 naming label', async () => {
    const body = expectProblem(
      await post(
        `/v1/tenants/${operator.tenantId}/api-keys`,
        operator.key,
        '{"role":"app","label":null}',
      ),
      400,
    );
    expect(body).toMatchObject({
      type: 'urn:portico:problem:validation-failed',
      detail: 'The request body has 1 invalid field: label',
    });
  });

  it('refuses a malformed date in the audit query with 400 naming the query field', async () => {
    for (const value of ['2026', '2026-W47', '0000-01-01', '2026-13-01', 'yesterday']) {
      const answer = await sut.app.inject({
        method: 'GET',
        url: `/v1/audit/consents?createdFrom=${value}`,
        headers: bearer(auditor),
      });
      const body = expectProblem(answer, 400);
      expect([value, body.detail]).toEqual([
        value,
        'The request query has 1 invalid field: createdFrom',
      ]);
    }
    for (const url of ['/v1/audit/payments?createdTo=2026', '/v1/audit/export?from=2026-W47']) {
      const body = expectProblem(
        await sut.app.inject({ method: 'GET', url, headers: bearer(auditor) }),
        400,
      );
      expect([url, body.detail]).toEqual([
        url,
        expect.stringMatching(/^The request query has 1 invalid field: (createdTo|from)$/),
      ]);
    }
    const fine = await sut.app.inject({
      method: 'GET',
      url: '/v1/audit/consents?createdFrom=2026-01-01&createdTo=2026-12-31T23:59:59Z',
      headers: bearer(auditor),
    });
    expect(fine.statusCode).toBe(200);
  });

  it('says "query" for invalid query parameters and lists each field once', async () => {
    const answer = await sut.app.inject({
      method: 'GET',
      url: '/v1/audit/consents?page=x&pageSize=-1&zzz=1&status=nope',
      headers: bearer(auditor),
    });
    const body = expectProblem(answer, 400);
    const fields = (body.errors as { field: string }[]).map((e) => e.field);
    expect(fields.sort()).toEqual(['page', 'pageSize', 'status', 'zzz']);
    expect(body.detail).toMatch(/^The request query has 4 invalid fields: /);
    const named = (body.detail as string).split(': ')[1].split(', ');
    expect(named.sort()).toEqual(['page', 'pageSize', 'status', 'zzz']);
  });

  it('answers what the router refuses (a path parameter over 100 characters, a malformed URL) as problem+json', async () => {
    const long = fromRaw(
      await rawRequest(
        port,
        `GET /v1/consents/${'a'.repeat(150)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app}\r\n\r\n`,
      ),
    );
    expect(expectProblem(long, 414).detail).toBe('A path parameter is longer than 100 characters');
    const badUrl = fromRaw(
      await rawRequest(port, `GET /v1/consents/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    expect(expectProblem(badUrl, 400).type).toBe('urn:portico:problem:malformed-request');
    // The caller's own request id is kept there too.
    const id = randomUUID();
    const withId = await sut.app.inject({
      method: 'GET',
      url: `/v1/payments/${'p'.repeat(101)}`,
      headers: { 'x-request-id': id },
    });
    expect(expectProblem(withId, 414).requestId).toBe(id);
  });

  it("answers what Node's HTTP parser refuses on the socket as problem+json with a request id", async () => {
    const cases: [string, string | Buffer, number][] = [
      [
        'a header name with a control byte',
        Buffer.from('GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Bad\u0001Name: y\r\n\r\n', 'latin1'),
        400,
      ],
      [
        'a header value with a NUL',
        Buffer.from('GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Thing: a\u0000b\r\n\r\n', 'latin1'),
        400,
      ],
      [
        'Content-Length: -1',
        'POST /v1/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}',
        400,
      ],
      [
        'two different Content-Lengths',
        'POST /v1/tenants HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
        400,
      ],
      [
        'headers over 16 KB',
        `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
        431,
      ],
      ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400],
    ];
    for (const [what, bytes, status] of cases) {
      const raw = await rawRequest(port, bytes);
      const body = expectProblem(fromRaw(raw), status);
      expect([what, raw.headers.connection]).toEqual([what, 'close']);
      if (status === 400)
        expect([what, body.type]).toEqual([what, 'urn:portico:problem:malformed-request']);
    }
    // The raw bytes (which may carry a key) are not logged; the refusal is, with its id.
    expect(sut.logs.join('\n')).not.toContain('X-Bad');
    expect(sut.logs.some((line) => line.includes('request refused by the HTTP parser'))).toBe(true);
  });

  it('answers what Node itself would answer bare (no Host, an unknown Expect, CONNECT) as problem+json', async () => {
    const noHost = fromRaw(await rawRequest(port, 'GET /v1/me HTTP/1.1\r\n\r\n'));
    expect(expectProblem(noHost, 400).detail).toBe('An HTTP/1.1 request needs a Host header');
    // HTTP/1.0 has no Host requirement.
    const old = fromRaw(await rawRequest(port, 'GET /health/live HTTP/1.0\r\n\r\n'));
    expect(old.statusCode).toBe(200);
    const expect417 = fromRaw(
      await rawRequest(port, 'GET /v1/me HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\n\r\n'),
    );
    expectProblem(expect417, 417);
    const connect = fromRaw(await rawRequest(port, 'CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n'));
    expectProblem(connect, 405);
  });

  it('answers too large, unsupported and malformed bodies over a real socket as problem+json', async () => {
    const head = (length: number, type = 'application/json') =>
      `POST /v1/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${operator.key}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;
    const big = JSON.stringify({ slug: 'big', name: 'x'.repeat(70_000) });
    expectProblem(fromRaw(await rawRequest(port, head(big.length) + big)), 413);
    expectProblem(fromRaw(await rawRequest(port, `${head(3, 'text/csv')}a,b`)), 415);
    const bad = '{"slug":';
    expect(expectProblem(fromRaw(await rawRequest(port, head(bad.length) + bad)), 400).type).toBe(
      'urn:portico:problem:malformed-body',
    );
    // An empty JSON body is no body (docs/decisions.md): a route whose body is required names it missing.
    const empty = expectProblem(fromRaw(await rawRequest(port, head(0))), 400);
    expect(empty.type).toBe('urn:portico:problem:validation-failed');
  });

  it('logs a failed query with its SQL text and never its parameters', async () => {
    const answer = await sut.app.inject({ method: 'GET', url: '/probe/failed-query' });
    const body = expectProblem(answer, 500);
    const lines = sut.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const failed = lines.find((l) => l.msg === 'query failed' && l.requestId === body.requestId);
    expect(failed).toMatchObject({ query: 'SELECT $1::uuid AS id', code: '22P02' });
    const unhandled = lines.find(
      (l) => l.msg === 'unhandled error' && l.requestId === body.requestId,
    );
    expect(unhandled).toBeDefined();
    expect(JSON.stringify(unhandled)).toContain('invalid input syntax for type uuid');
    expect(sut.logs.join('\n')).not.toContain(PROBE_IBAN);
  });

  it('never logs the SCA callback state, whatever the answer', async () => {
    const state = 'S'.repeat(20) + randomUUID().replace(/-/g, '').slice(0, 23);
    const answer = await sut.app.inject({
      method: 'GET',
      url: `/v1/sca/callback/${state}?state=${state}`,
    });
    expect(answer.statusCode).toBe(410);
    const malformed = await sut.app.inject({ method: 'GET', url: `/v1/sca/callback/${state}x` });
    expectProblem(malformed, 410);
    const logged = sut.logs.join('\n');
    expect(logged).not.toContain(state);
    expect(logged).toContain('/v1/sca/callback/[REDACTED]');
  });
});

describe('earlyRefusal', () => {
  const request = (httpVersion: string, host?: string) =>
    ({ raw: { httpVersion }, headers: host ? { host } : {} }) as unknown as FastifyRequest;

  it('refuses every request while the replica shuts down with 503, else only HTTP/1.1 without Host', () => {
    expect(earlyRefusal(request('1.1', 'x'), true)?.init).toMatchObject({
      status: 503,
      type: 'urn:portico:problem:unavailable',
    });
    expect(earlyRefusal(request('1.1'), false)?.init.status).toBe(400);
    expect(earlyRefusal(request('1.0'), false)).toBeUndefined();
    expect(earlyRefusal(request('1.1', 'x'), false)).toBeUndefined();
  });
});
