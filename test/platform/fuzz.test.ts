import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { HTTPMethods } from 'fastify';
import { approvedConsent } from '../support/consent-flow.js';
import {
  hostileString,
  mutate,
  nested,
  percentEncode,
  Random,
  rawBody,
  validValue,
  wrongValue,
  type Json,
  type Schema,
} from '../support/fuzz-inputs.js';
import { rawRequest } from '../support/raw-http.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

/**
 * A bounded, deterministic fuzz of the facade: requests generated from openapi/gateway.json (valid-ish and
 * malformed bodies, wrong types, huge, deep and odd unicode strings, bad query values and path parameters,
 * odd headers and content types) through Fastify's inject and, one in ten, over a real socket; then raw
 * HTTP/1.1 abuse that only a socket can carry. Every answer: no 5xx, and every error problem+json with the
 * request id of its header. FUZZ_SEED replays another run.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const PER_OPERATION = 70;
const STRAY_REQUESTS = 200;
const RAW_REQUESTS = 250;
const CONCURRENT_REQUESTS = 4;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}

interface Operation {
  method: HTTPMethods;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: Schema;
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  viaSocket: boolean;
}

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

const spec = JSON.parse(readFileSync('openapi/gateway.json', 'utf8')) as {
  paths: Record<
    string,
    Record<
      string,
      Omit<Operation, 'method' | 'path'> & {
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
  components: { schemas: Record<string, Schema> };
};
const components = spec.components.schemas;
const operations: Operation[] = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({
    method: method.toUpperCase() as HTTPMethods,
    path,
    operationId: operation.operationId,
    parameters: (operation.parameters ?? []) as Parameter[],
    body: operation.requestBody?.content['application/json']?.schema,
  })),
);

/** What is wrong with an answer, if anything. */
function fault(request: FuzzRequest, answer: Answer): string | undefined {
  const requestId = answer.headers['x-request-id'];
  if (answer.status >= 500) return `${answer.status}: ${answer.body.slice(0, 300)}`;
  if (typeof requestId !== 'string' || !UUID.test(requestId)) return `no request id header`;
  if (answer.status < 400 || request.method === 'HEAD') return undefined;
  if (!String(answer.headers['content-type']).startsWith('application/problem+json'))
    return `${answer.status} as ${String(answer.headers['content-type'])}: ${answer.body.slice(0, 200)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return `${answer.status} problem that is not JSON: ${answer.body.slice(0, 200)}`;
  }
  if (body.status !== answer.status || body.requestId !== requestId)
    return `${answer.status} problem with status ${String(body.status)}, requestId ${String(body.requestId)}`;
  if (typeof body.type !== 'string' || typeof body.title !== 'string')
    return `${answer.status} problem without type or title`;
  return undefined;
}

const describeRequest = (request: FuzzRequest) =>
  `${request.viaSocket ? 'socket' : 'inject'} ${request.method} ${request.url.slice(0, 200)} ${JSON.stringify(request.headers).slice(0, 300)} ${String(request.payload ?? '').slice(0, 200)}`;

describe(`fuzz (seed ${SEED})`, () => {
  let sut: TestGateway;
  let port: number;
  const random = new Random(SEED);
  const keys: Record<'app' | 'admin' | 'operator' | 'auditor', string> = {} as never;
  let adminTenant: string;
  let victimTenant: string;
  const victimKeys: string[] = [];
  let consentId: string;
  let accountId: string;

  beforeAll(async () => {
    sut = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '1000000' }, [], { listen: true });
    port = Number(new URL(sut.baseUrl).port);
    for (const role of ['app', 'admin', 'operator', 'auditor'] as const) {
      const issued = await sut.newTenantWithKey(role);
      keys[role] = issued.key;
      if (role === 'admin') adminTenant = issued.tenantId;
    }
    const victim = await sut.newTenantWithKey('app');
    victimTenant = victim.tenantId;
    for (let i = 0; i < 5; i++)
      victimKeys.push((await sut.tenants.issueKey(victimTenant, 'app')).apiKey.id);
    ({ consentId, accountId } = await approvedConsent(sut, keys.app));
  });
  afterAll(() => sut.close());

  /** Sometimes none, another role's key, or garbage; else the key a caller of this operation would use. */
  function authorization(operation: Operation): string | undefined {
    const roll = random.int(20);
    if (roll === 0) return undefined;
    if (roll === 1) return `Bearer ${random.pick(Object.values(keys))}`;
    if (roll === 2)
      return random.pick([
        'Bearer',
        'Basic YWxhZGRpbjpvcGVu',
        `Bearer ptk_${random.hex(8)}_${random.hex(43)}`,
        'Bearer \u00e9',
        `Bearer ${'k'.repeat(3000)}`,
      ]);
    return properKey(operation);
  }

  /** The key a caller of this operation would use. */
  function properKey(operation: Operation): string | undefined {
    const path = operation.path;
    if (path.startsWith('/v1/tenants'))
      return `Bearer ${random.chance(0.6) ? keys.operator : keys.admin}`;
    if (path.startsWith('/v1/audit')) return `Bearer ${keys.auditor}`;
    if (path.startsWith('/health'))
      return random.chance(0.5) ? `Bearer ${keys.operator}` : undefined;
    if (path.startsWith('/v1/sca')) return undefined;
    if (path === '/v1/me') return `Bearer ${random.pick(Object.values(keys))}`;
    return `Bearer ${keys.app}`;
  }

  function validParameter(parameter: Parameter): string {
    switch (parameter.name) {
      case 'consentId':
      case 'Consent-ID':
        return random.chance(0.8) ? consentId : random.uuid();
      case 'accountId':
        return random.chance(0.8) ? accountId : 'acc-unknown';
      case 'tenantId':
        return random.pick([adminTenant, victimTenant, random.uuid()]);
      case 'keyId':
        return random.chance(0.7) ? random.pick(victimKeys) : random.uuid();
      case 'state':
        return Array.from({ length: 43 }, () => random.pick([...'ABCxyz019_-'])).join('');
      case 'PSU-IP-Address':
        return random.pick(['192.0.2.10', '2001:db8::1']);
      case 'Idempotency-Key':
        return random.uuid();
      case 'dateFrom':
        return '2026-10-01';
      case 'dateTo':
        return '2026-11-20';
      default: {
        const value = validValue(parameter.schema, components, random);
        return typeof value === 'string' ? value : JSON.stringify(value);
      }
    }
  }

  /** A value for a path segment or a query value, percent-encoded or raw-ish. */
  function hostileSegment(): string {
    return random.pick<() => string>([
      () => percentEncode(hostileString(random)),
      () => 'a'.repeat(random.pick([100, 101, 300])),
      () =>
        random.pick([
          '%00',
          '%ff',
          '%E0%A4%A',
          '%',
          '..',
          '%2e%2e',
          '%2F',
          '%C0%AF',
          '-1',
          '0',
          '1e400',
        ]),
      () => random.uuid().toUpperCase(),
      () => `${random.uuid()}x`,
      () => percentEncode(JSON.stringify(wrongValue(random))),
    ])();
  }

  /** A header value inject and Node both accept (printable ASCII), odd in content. */
  function hostileHeaderValue(): string {
    return random.pick([
      '',
      ' ',
      'not-a-uuid',
      random.uuid(),
      '999.999.999.999',
      '::::',
      "' OR 1=1 --",
      '%00',
      'x'.repeat(random.pick([46, 256, 5000])),
      '../../etc/passwd',
      '<script>',
    ]);
  }

  const CONTENT_TYPES = [
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/json;;',
    'application/json, text/plain',
    'application/merge-patch+json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'text/plain',
    'application/xml',
    '*/*',
    'garbage',
  ];

  function generate(operation: Operation): FuzzRequest {
    const valid = random.chance(0.3);
    const headers: Record<string, string> = {};
    const auth = valid ? properKey(operation) : authorization(operation);
    if (auth) headers.authorization = auth;
    let path = operation.path;
    const query: string[] = [];
    for (const parameter of operation.parameters) {
      const mutateIt = !valid && random.chance(0.3);
      if (parameter.in === 'path') {
        path = path.replace(
          `{${parameter.name}}`,
          mutateIt ? hostileSegment() : encodeURIComponent(validParameter(parameter)),
        );
      } else if (parameter.in === 'query') {
        if (!parameter.required && !mutateIt && random.chance(0.5)) continue;
        const name = encodeURIComponent(parameter.name);
        if (mutateIt && random.chance(0.3)) query.push(`${name}=1`, `${name}=2`);
        else
          query.push(
            `${name}=${mutateIt ? hostileSegment() : encodeURIComponent(validParameter(parameter))}`,
          );
      } else {
        if (!parameter.required && !mutateIt && random.chance(0.3)) continue;
        if (mutateIt && random.chance(0.3)) continue;
        headers[parameter.name] = mutateIt ? hostileHeaderValue() : validParameter(parameter);
      }
    }
    if (!valid && random.chance(0.15))
      query.push(`${random.pick(['zzz', '__proto__', 'constructor', 'a[b]'])}=${hostileSegment()}`);
    if (!valid && random.chance(0.1))
      headers['x-request-id'] = random.pick([random.uuid(), 'not-a-uuid', 'x'.repeat(200)]);
    if (!valid && random.chance(0.1))
      headers.accept = random.pick(['text/html', 'application/xml', '*/*;q=0', '']);

    let payload: string | Buffer | undefined;
    const wantsBody = operation.body !== undefined || (!valid && random.chance(0.1));
    if (wantsBody) {
      const base = operation.body
        ? validValue(operation.body, components, random)
        : { stray: true };
      let body: Json = base;
      if (!valid) {
        const rounds = 1 + random.int(3);
        for (let i = 0; i < rounds; i++) body = mutate(body, random);
      }
      if (!valid && random.chance(0.1)) body = nested(random.pick([65, 500, 2000]), random);
      payload = !valid && random.chance(0.25) ? rawBody(body, random) : JSON.stringify(body);
      const contentType =
        valid || random.chance(0.6) ? 'application/json' : random.pick(CONTENT_TYPES);
      if (!(!valid && random.chance(0.05))) headers['content-type'] = contentType;
      if (contentType === 'application/x-www-form-urlencoded' && random.chance(0.5))
        payload = `role=app&label=${percentEncode(hostileString(random))}&slug=a%00b`;
    }
    return {
      method: operation.method,
      url: `${path}${query.length ? `?${query.join('&')}` : ''}`,
      headers,
      payload,
      viaSocket: random.chance(0.1),
    };
  }

  /** Requests to no operation: other methods on the spec's paths, and paths that are not there. */
  function stray(): FuzzRequest {
    const operation = random.pick(operations);
    const method = random.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);
    const path = random.chance(0.5)
      ? operation.path.replace(/\{[^}]+\}/g, () => hostileSegment())
      : `/${random.pick(['v1', 'v2', 'docs', 'health', '', '..'])}/${hostileSegment()}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${random.pick(Object.values(keys))}`,
    };
    let payload: string | Buffer | undefined;
    if (random.chance(0.3)) {
      headers['content-type'] = random.pick(CONTENT_TYPES);
      payload = rawBody({ a: hostileString(random) }, random);
    }
    return { method, url: path, headers, payload, viaSocket: random.chance(0.2) };
  }

  async function send(request: FuzzRequest): Promise<Answer> {
    if (!request.viaSocket) {
      const reply = await sut.app.inject({
        method: request.method as HTTPMethods,
        url: request.url,
        headers: request.headers,
        ...(request.payload !== undefined ? { payload: request.payload } : {}),
      });
      return { status: reply.statusCode, headers: reply.headers, body: reply.body };
    }
    const body = request.payload === undefined ? Buffer.alloc(0) : Buffer.from(request.payload);
    const head = [
      `${request.method} ${request.url} HTTP/1.1`,
      'Host: 127.0.0.1',
      ...Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`),
      ...(request.payload !== undefined ? [`Content-Length: ${body.length}`] : []),
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    const raw = await rawRequest(port, Buffer.concat([Buffer.from(head, 'latin1'), body]), 30_000);
    return { status: raw.status, headers: raw.headers, body: raw.body };
  }

  it(`answers ${operations.length} operations × ${PER_OPERATION} generated requests and ${STRAY_REQUESTS} strays with no 5xx, every error problem+json with its request id`, async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const requests = [
      ...operations.flatMap((operation) =>
        Array.from({ length: PER_OPERATION }, () => generate(operation)),
      ),
      ...Array.from({ length: STRAY_REQUESTS }, () => stray()),
    ];
    // A few at a time, as apps call (the requests are drawn beforehand: the seed replays the same ones);
    // one after the other, the run mostly waited on the database and the sandbox.
    let next = 0;
    const sender = async () => {
      while (next < requests.length) {
        const request = requests[next++];
        let answer: Answer;
        try {
          answer = await send(request);
        } catch (error) {
          failures.push(`no answer (${(error as Error).message}): ${describeRequest(request)}`);
          continue;
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const wrong = fault(request, answer);
        if (wrong) failures.push(`${wrong} <- ${describeRequest(request)}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENT_REQUESTS }, sender));
    process.stdout.write(
      `fuzz seed ${SEED}: ${requests.length} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}\n`,
    );
    expect(failures.slice(0, 15)).toEqual([]);
    // The run reached past authentication and validation: the bank answered some, Portico refused some.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(50);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(300);
  }, 300_000);

  /** Bytes no HTTP client would send, each on its own connection. */
  function rawAbuse(): Buffer {
    const target = random.pick([
      '/v1/me',
      '/v1/tenants',
      `/v1/consents/${random.uuid()}`,
      '/health/ready',
    ]);
    const auth = `Authorization: Bearer ${random.pick(Object.values(keys))}\r\n`;
    const template = random.pick<() => string>([
      () => `GET ${target} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
      () =>
        `POST /v1/tenants HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      () =>
        `GET ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: ${random.pick(['-1', 'abc', '1e3', '0x10', '99999999999999999999', ' 5', '5,6'])}\r\n\r\n`,
      () =>
        `POST /v1/tenants HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      () =>
        `POST /v1/tenants HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${random.pick(['zz', '-1', 'fffffffffffffffffffff', '2;ext=' + 'e'.repeat(20000)])}\r\n{}\r\n0\r\n\r\n`,
      () =>
        `POST /v1/tenants HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ${random.pick(['gzip', 'chunked, gzip', 'identity', 'chunked\u0000'])}\r\n\r\n`,
      () =>
        `GET ${target} HTTP/${random.pick(['0.9', '1.2', '2.0', '9.9', '1', '1.1.1'])}\r\nHost: x\r\n\r\n`,
      () =>
        `${random.pick(['FOO', 'G ET', 'get', 'GET\u0001', 'CONNECT', 'PRI', 'TRACE', 'M-SEARCH'])} ${target} HTTP/1.1\r\nHost: x\r\n\r\n`,
      () =>
        `GET ${random.pick(['*', 'http://evil.example/v1/me', '//v1/me', 'v1/me', '/v1/me#frag', '/v1/me?%', `/${'%'.repeat(10)}`, `/${'a'.repeat(9000)}`])} HTTP/1.1\r\nHost: x\r\n\r\n`,
      () => `GET ${target} HTTP/1.1\r\n\r\n`,
      () =>
        `GET ${target} HTTP/1.1\r\nHost: x\r\nExpect: ${random.pick(['fancy', '100-continue-please', '200-ok'])}\r\n\r\n`,
      () => `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n  folded\r\n\r\n`,
      () =>
        `GET ${target} HTTP/1.1\r\nHost: x\r\n${random.pick(['X-Big', 'Cookie', 'Authorization'])}: ${'z'.repeat(random.pick([17_000, 40_000]))}\r\n\r\n`,
      () =>
        `GET ${target} HTTP/1.1\r\nHost: x\r\n${Array.from({ length: random.pick([200, 2100]) }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
      () => `GET ${target} HTTP/1.1\r\nHost: x\r\n: empty-name\r\n\r\n`,
      () => `GET ${target} HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n`,
      () => `GET ${target} HTTP/1.1\nHost: x\n\n`,
      () =>
        `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${random.pick(['\u00e9\u00e9', 'a'.repeat(500), random.uuid()])}\r\n\r\n`,
    ]);
    const bytes = Buffer.from(template(), 'latin1');
    if (random.chance(0.3)) {
      // A random byte inside the request line or the headers (not in the blank line that ends them).
      const end = bytes.indexOf('\r\n\r\n');
      const at = random.int(Math.max(1, end > 0 ? end : bytes.length - 2));
      return Buffer.concat([
        bytes.subarray(0, at),
        Buffer.from([random.int(256)]),
        bytes.subarray(at),
      ]);
    }
    return bytes;
  }

  it(`answers ${RAW_REQUESTS} raw HTTP/1.1 abuses on the socket with no 5xx, every error problem+json with its request id`, async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < RAW_REQUESTS; i++) {
      const bytes = rawAbuse();
      const request: FuzzRequest = { method: 'RAW', url: '', headers: {}, viaSocket: true };
      let answer: Answer;
      try {
        const raw = await rawRequest(port, bytes, 5000);
        answer = { status: raw.status, headers: raw.headers, body: raw.body };
      } catch (error) {
        failures.push(
          `no answer (${(error as Error).message}): ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`,
        );
        continue;
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const wrong = fault(request, answer);
      if (wrong)
        failures.push(`${wrong} <- ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`);
    }
    process.stdout.write(
      `fuzz seed ${SEED} raw: ${RAW_REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}\n`,
    );
    expect(failures.slice(0, 15)).toEqual([]);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(50);
  });
});
