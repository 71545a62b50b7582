import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TRACER } from '#src/platform/tracing/tracing.module.js';
import type { Tracer } from '#src/platform/tracing/tracer.js';
import { approvedConsent } from '../support/consent-flow.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A caller's trace: its ids and the traceparent header naming its span. */
function callerTrace(sampled = true) {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}

type LogLine = Record<string, unknown>;
const linesOf = (gateway: TestGateway): LogLine[] =>
  gateway.logs.map((line) => JSON.parse(line) as LogLine);

/** The sandbox's request lines (`sandbox request`) for one trace, of one of its listeners. */
const sandboxLines = (gateway: TestGateway, listener: string, traceId: string) =>
  linesOf(gateway).filter(
    (line) =>
      line.component === 'sandbox' &&
      line.listener === listener &&
      String(line.traceparent).includes(traceId),
  );

describe('tracing with export on: spans at a local OTLP receiver', () => {
  let receiver: OtlpReceiver;
  let sut: TestGateway;
  let tenant: { tenantId: string; key: string };
  let consent: { consentId: string; accountId: string };

  const balances = (headers: Record<string, string>) =>
    sut.app.inject({
      method: 'GET',
      url: `/v1/accounts/${consent.accountId}/balances`,
      headers: {
        ...bearer(tenant.key),
        'consent-id': consent.consentId,
        'psu-ip-address': '192.0.2.10',
        ...headers,
      },
    });

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    sut = await startTestGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=s3cret%2C1',
      OTEL_SERVICE_NAME: 'portico-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    tenant = await sut.newTenantWithKey('app');
    consent = await approvedConsent(sut, tenant.key);
  });
  afterEach(() => sut.sandbox.chaos.clear());
  afterAll(async () => {
    await sut.close();
    await receiver.close();
  });

  it("puts a read under the caller's trace: the facade request, its statement group and the provider call, whose traceparent the sandbox received", async () => {
    const caller = callerTrace();
    const answer = await balances({
      traceparent: caller.traceparent,
      tracestate: 'app=t61rcWkgMzE',
    });
    expect(answer.statusCode).toBe(200);
    const requestId = answer.headers['x-request-id'];

    const request = await receiver.span(caller.traceId, (span) => span.kind === SERVER);
    expect(request).toMatchObject({
      parentSpanId: caller.spanId,
      name: 'GET /v1/accounts/:accountId/balances',
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/v1/accounts/:accountId/balances',
        'http.response.status_code': 200,
        'portico.request_id': requestId,
        'portico.tenant_id': tenant.tenantId,
      },
      resource: { 'service.name': 'portico-under-test' },
    });
    const call = await receiver.span(
      caller.traceId,
      (span) => span.kind === CLIENT && span.name.startsWith('open-banking'),
    );
    expect(call).toMatchObject({
      parentSpanId: request.spanId,
      name: 'open-banking getBalances',
      attributes: {
        'portico.upstream': 'open-banking',
        'portico.upstream.operation': 'getBalances',
        'http.response.status_code': 200,
        'portico.upstream.outcome': 'ok',
        'portico.upstream.attempts': 1,
      },
    });
    expect(call.statusCode).not.toBe(ERROR);
    const group = await receiver.span(caller.traceId, (span) =>
      span.name.startsWith('db.statement_group'),
    );
    expect(group).toMatchObject({
      parentSpanId: request.spanId,
      name: 'db.statement_group consent-access:admit',
      attributes: {
        'db.system.name': 'postgresql',
        'portico.statement_group': 'consent-access:admit',
      },
    });
    expect(group.attributes['db.operation.batch.size']).toBeGreaterThanOrEqual(1);

    // The provider saw the call's span as the parent, and the caller's tracestate.
    expect(sandboxLines(sut, 'open-banking', caller.traceId)).toEqual([
      expect.objectContaining({
        requestId,
        traceparent: `00-${caller.traceId}-${call.spanId}-01`,
        tracestate: 'app=t61rcWkgMzE',
        path: expect.stringMatching(new RegExp(`/accounts/${consent.accountId}/balances$`)),
        status: 200,
      }),
    ]);
    // Every line the gateway wrote about the request names the trace.
    const lines = linesOf(sut).filter(
      (line) => line.requestId === requestId && line.component !== 'sandbox',
    );
    expect(lines.map((line) => line.msg)).toContain('request completed');
    for (const line of lines) expect(line.traceId).toBe(caller.traceId);
    // The collector's headers went with the export.
    expect(receiver.requests[0]).toMatchObject({
      path: '/v1/traces',
      headers: { 'x-collector-key': 's3cret,1', 'content-type': 'application/json' },
    });
  });

  it('starts a trace for a request without traceparent, and names it in the problem body and the log', async () => {
    const refused = await sut.app.inject({ method: 'GET', url: '/v1/me' });
    expect(refused.statusCode).toBe(401);
    const { traceId } = refused.json();
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const request = await receiver.span(traceId, (span) => span.kind === SERVER);
    expect(request.parentSpanId).toBeUndefined();
    expect(request).toMatchObject({
      name: 'GET /v1/me',
      attributes: { 'http.response.status_code': 401 },
    });
    const line = linesOf(sut).find(
      (entry) =>
        entry.msg === 'request completed' && entry.requestId === refused.headers['x-request-id'],
    );
    expect(line).toMatchObject({ traceId, status: 401 });

    const caller = callerTrace();
    const named = await sut.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { traceparent: caller.traceparent },
    });
    expect(named.json()).toMatchObject({ status: 401, traceId: caller.traceId });
  });

  it('marks a provider call failed on a 5xx answer (after its retries), and unknown when a write may have acted and no answer came', async () => {
    sut.sandbox.chaos.add({ operation: 'getBalances', fault: 'status', status: 503 });
    const caller = callerTrace();
    const failed = await balances({ traceparent: caller.traceparent });
    expect(failed.statusCode).toBe(502);
    expect(failed.json().traceId).toBe(caller.traceId);
    const read = await receiver.span(
      caller.traceId,
      (span) => span.name === 'open-banking getBalances',
    );
    expect(read).toMatchObject({
      statusCode: ERROR,
      attributes: {
        'portico.upstream.outcome': 'failed',
        'http.response.status_code': 503,
        'error.type': '503',
        'portico.upstream.attempts': 3,
      },
    });
    const request = await receiver.span(caller.traceId, (span) => span.kind === SERVER);
    expect(request).toMatchObject({ statusCode: ERROR, attributes: { 'error.type': '502' } });

    sut.sandbox.chaos.add({ operation: 'createConsent', fault: 'act-then-fail', then: 'reset' });
    const write = callerTrace();
    const lost = await sut.app.inject({
      method: 'POST',
      url: '/v1/consents',
      headers: { ...bearer(tenant.key), traceparent: write.traceparent },
      payload: {
        brandId: 'danube-bank',
        access: { accounts: [{ iban: 'HU75118000170000001234567817' }] },
        recurringIndicator: true,
        validUntil: '2099-12-31',
        frequencyPerDay: 4,
        redirectUri: 'https://app.example/back',
      },
    });
    expect(lost.statusCode).toBe(502);
    expect(lost.json()).toMatchObject({ outcome: 'unknown', traceId: write.traceId });
    const create = await receiver.span(
      write.traceId,
      (span) => span.name === 'open-banking createConsent',
    );
    expect(create).toMatchObject({
      statusCode: ERROR,
      attributes: { 'portico.upstream.outcome': 'unknown', 'portico.upstream.attempts': 1 },
    });
    expect(create.attributes['http.response.status_code']).toBeUndefined();
  });

  it('sends traceparent on card and POS calls too', async () => {
    for (const [url, listener, name] of [
      ['/v1/card/branches', 'card', 'card listBranches'],
      ['/v1/pos/terminals', 'pos', 'pos listPosTerminals'],
    ] as const) {
      const caller = callerTrace();
      const answer = await sut.app.inject({
        method: 'GET',
        url,
        headers: { ...bearer(tenant.key), traceparent: caller.traceparent },
      });
      expect({ url, status: answer.statusCode }).toEqual({ url, status: 200 });
      const call = await receiver.span(caller.traceId, (span) => span.name === name);
      expect(call.attributes).toMatchObject({
        'portico.upstream': listener,
        'portico.upstream.outcome': 'ok',
      });
      expect(sandboxLines(sut, listener, caller.traceId)).toEqual([
        expect.objectContaining({
          traceparent: `00-${caller.traceId}-${call.spanId}-01`,
          status: 200,
        }),
      ]);
    }
  });

  it("follows the caller's sampled flag: a trace it does not sample is not exported, yet reaches the provider", async () => {
    const unsampled = callerTrace(false);
    expect((await balances({ traceparent: unsampled.traceparent })).statusCode).toBe(200);
    // Spans are exported in the order they end: once a later request's are in, the first's would be.
    const later = callerTrace();
    expect((await balances({ traceparent: later.traceparent })).statusCode).toBe(200);
    await receiver.span(later.traceId, (span) => span.kind === SERVER);
    expect(receiver.trace(unsampled.traceId)).toEqual([]);
    const [seen] = sandboxLines(sut, 'open-banking', unsampled.traceId);
    expect(seen.traceparent).toMatch(new RegExp(`^00-${unsampled.traceId}-[0-9a-f]{16}-00$`));
  });

  it('takes a malformed traceparent for none: the request starts a trace of its own', async () => {
    const caller = callerTrace();
    const refused = await sut.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { traceparent: caller.traceparent.toUpperCase() },
    });
    const { traceId } = refused.json();
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(caller.traceId);
    const request = await receiver.span(traceId, (span: ReceivedSpan) => span.kind === SERVER);
    expect(request.parentSpanId).toBeUndefined();
  });
});

describe('tracing with export off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let sut: TestGateway;
  beforeAll(async () => {
    sut = await startTestGateway();
  });
  afterAll(() => sut.close());

  it('loads no OpenTelemetry SDK, yet sends the trace to the provider and names it in the log and problem bodies', async () => {
    expect(sut.app.get<Tracer>(TRACER).exporting).toBe(false);
    const tenant = await sut.newTenantWithKey('app');
    const caller = callerTrace();
    const answer = await sut.app.inject({
      method: 'GET',
      url: '/v1/card/branches',
      headers: { ...bearer(tenant.key), traceparent: caller.traceparent },
    });
    expect(answer.statusCode).toBe(200);
    const [seen] = sandboxLines(sut, 'card', caller.traceId);
    // A span id of Portico's own as the parent (the caller's flag passed on).
    expect(seen.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    expect(seen.traceparent).not.toContain(caller.spanId);
    const line = linesOf(sut).find(
      (entry) =>
        entry.msg === 'request completed' && entry.requestId === answer.headers['x-request-id'],
    );
    expect(line).toMatchObject({ traceId: caller.traceId });

    const refused = await sut.app.inject({ method: 'GET', url: '/v1/me' });
    expect(refused.json().traceId).toMatch(/^[0-9a-f]{32}$/);
    // A trace Portico starts while nothing records it goes to the provider as not sampled.
    const own = await sut.app.inject({
      method: 'GET',
      url: '/v1/card/branches',
      headers: bearer(tenant.key),
    });
    const ownLine = linesOf(sut).find(
      (entry) =>
        entry.msg === 'request completed' && entry.requestId === own.headers['x-request-id'],
    );
    const traceId = String(ownLine?.traceId);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(sandboxLines(sut, 'card', traceId)).toEqual([
      expect.objectContaining({
        traceparent: expect.stringMatching(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`)),
      }),
    ]);
  });

  it('imports the SDK in one module, and that module only on demand', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
      );
    const sources = files('src').filter((file) => file.endsWith('.ts'));
    const importing = sources.filter((file) =>
      /from '@opentelemetry\//.test(readFileSync(file, 'utf8')),
    );
    expect(importing).toEqual([join('src', 'platform', 'tracing', 'otel-tracer.ts')]);
    const loaders = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/.*otel-tracer\.js'.*/g)].map((match) =>
        match[0].trim(),
      ),
    );
    expect(loaders).toEqual(["const { OtelTracer } = await import('./otel-tracer.js');"]);
  });
});
