import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { loadConfig } from '#src/platform/config/app-config.js';
import { MetricsListener } from '#src/platform/metrics/metrics-listener.js';
import { Metrics, type PoolCounts } from '#src/platform/metrics/metrics.service.js';
import { parseSamples, sampleValue } from '../support/prometheus.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('Metrics', () => {
  it('counts upstream calls by upstream, operation and outcome, with their durations', async () => {
    const sut = new Metrics();
    sut.recordUpstreamCall('open-banking', 'getBalances', 'ok', 0.2);
    sut.recordUpstreamCall('open-banking', 'getBalances', 'ok', 0.03);
    sut.recordUpstreamCall('open-banking', 'getBalances', 'timeout', 15);
    const text = await sut.registry.metrics();
    const ok = { upstream: 'open-banking', operation: 'getBalances', outcome: 'ok' };
    expect(sampleValue(text, 'portico_upstream_calls_total', ok)).toBe(2);
    expect(sampleValue(text, 'portico_upstream_call_duration_seconds_count', ok)).toBe(2);
    expect(sampleValue(text, 'portico_upstream_call_duration_seconds_sum', ok)).toBeCloseTo(0.23);
    expect(
      sampleValue(text, 'portico_upstream_call_duration_seconds_bucket', { ...ok, le: '0.05' }),
    ).toBe(1);
    expect(sampleValue(text, 'portico_upstream_calls_total', { ...ok, outcome: 'timeout' })).toBe(
      1,
    );
    // Buckets are cumulative; a value on a bound falls in that bound's bucket; +Inf is the count.
    sut.recordUpstreamCall('open-banking', 'getBalances', 'ok', 0.25);
    const again = await sut.registry.metrics();
    const bucket = (labels: Record<string, string>, le: string) =>
      sampleValue(again, 'portico_upstream_call_duration_seconds_bucket', { ...labels, le });
    expect(['0.025', '0.05', '0.1', '0.25', '0.5', '+Inf'].map((le) => bucket(ok, le))).toEqual([
      0, 1, 1, 3, 3, 3,
    ]);
    const timeout = { ...ok, outcome: 'timeout' };
    expect(['10', '30', '+Inf'].map((le) => bucket(timeout, le))).toEqual([0, 1, 1]);
    expect(again).toContain('# TYPE portico_upstream_call_duration_seconds histogram');
    expect(again).toContain('# TYPE portico_upstream_calls_total counter');
  });

  it('shows the breaker state per upstream and key as 0 closed, 1 half-open, 2 open', async () => {
    const sut = new Metrics();
    sut.setBreakerState('open-banking', 'brand-a', 'open');
    sut.setBreakerState('open-banking', 'brand-b', 'open');
    sut.setBreakerState('open-banking', 'brand-b', 'half-open');
    sut.setBreakerState('card', 'card', 'closed');
    const text = await sut.registry.metrics();
    const state = (upstream: string, key: string) =>
      sampleValue(text, 'portico_upstream_breaker_state', { upstream, key });
    expect(state('open-banking', 'brand-a')).toBe(2);
    expect(state('open-banking', 'brand-b')).toBe(1);
    expect(state('card', 'card')).toBe(0);
  });

  it('counts contract mismatches per upstream operation and budget refusals', async () => {
    const sut = new Metrics();
    sut.recordContractMismatch('open-banking', 'getAccounts');
    sut.recordContractMismatch('open-banking', 'getAccounts');
    sut.recordBudgetRefusal();
    const text = await sut.registry.metrics();
    expect(
      sampleValue(text, 'portico_upstream_contract_mismatches_total', {
        upstream: 'open-banking',
        operation: 'getAccounts',
      }),
    ).toBe(2);
    expect(sampleValue(text, 'portico_budget_refusals_total')).toBe(1);
  });

  it('reads the database pool at scrape time, and shows nothing while there is no pool', async () => {
    const sut = new Metrics();
    const pool: { counts?: PoolCounts } = {};
    sut.watchDbPool(() => pool.counts);
    expect(parseSamples(await sut.registry.metrics()).map((s) => s.name)).not.toContain(
      'portico_db_pool_connections',
    );
    pool.counts = { total: 4, idle: 1, waiting: 2 };
    const text = await sut.registry.metrics();
    expect(sampleValue(text, 'portico_db_pool_connections', { state: 'total' })).toBe(4);
    expect(sampleValue(text, 'portico_db_pool_connections', { state: 'idle' })).toBe(1);
    expect(sampleValue(text, 'portico_db_pool_connections', { state: 'waiting' })).toBe(2);
  });

  it('keeps each instance in its own registry, with the default process metrics', async () => {
    const first = new Metrics();
    const second = new Metrics();
    first.recordBudgetRefusal();
    expect(sampleValue(await second.registry.metrics(), 'portico_budget_refusals_total')).toBe(0);
    const names = parseSamples(await second.registry.metrics()).map((sample) => sample.name);
    expect(names).toEqual(
      expect.arrayContaining(['process_cpu_user_seconds_total', 'nodejs_heap_size_used_bytes']),
    );
  });

  it('starts no listener when METRICS_PORT is off', async () => {
    const config = loadConfig({ METRICS_PORT: 'off' });
    const sut = new MetricsListener(config, pino({ level: 'silent' }), new Metrics());
    expect(await sut.start()).toBeUndefined();
  });
});

describe('the /metrics listener of a running gateway', () => {
  let sut: TestGateway;
  let metricsUrl: string;
  beforeAll(async () => {
    sut = await startTestGateway({ METRICS_PORT: '0' }, [], { listen: true });
    metricsUrl = sut.metricsUrl as string;
  });
  afterAll(() => sut.close());

  const scrape = async () => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  it('serves on its own port, not on the API port', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(metricsUrl).port).not.toBe(new URL(sut.baseUrl).port);
    expect((await fetch(`${sut.baseUrl}/metrics`)).status).toBe(404);
    expect((await fetch(new URL('/other', metricsUrl))).status).toBe(404);
  });

  it('counts requests by method, route template and status, never by raw URL', async () => {
    const { key } = await sut.newTenantWithKey('app');
    // Other tests here reach unknown routes too: count this one's as a difference.
    const unmatchedBefore =
      sampleValue(await scrape(), 'portico_http_requests_total', {
        method: 'GET',
        route: 'unmatched',
        status: '404',
      }) ?? 0;
    const me = await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    expect(me.statusCode).toBe(200);
    const balances = await sut.app.inject({
      method: 'GET',
      url: '/v1/accounts/acct-4711/balances',
    });
    expect(balances.statusCode).toBe(401);
    const unknown = await sut.app.inject({ method: 'GET', url: '/v1/no-such-route/acct-4712' });
    expect(unknown.statusCode).toBe(404);

    const text = await scrape();
    const count = (route: string, status: string) =>
      sampleValue(text, 'portico_http_requests_total', { method: 'GET', route, status });
    expect(count('/v1/me', '200')).toBe(1);
    expect(count('/v1/accounts/:accountId/balances', '401')).toBe(1);
    expect(count('unmatched', '404')).toBe(unmatchedBefore + 1);
    expect(
      sampleValue(text, 'portico_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/v1/me',
        status: '200',
      }),
    ).toBe(1);
    expect(text).not.toContain('acct-471');
    expect(text).not.toContain('no-such-route');
  });

  it("shows the database pool's connections", async () => {
    await sut.dataSource.query('SELECT 1');
    const text = await scrape();
    const total = sampleValue(text, 'portico_db_pool_connections', { state: 'total' });
    const idle = sampleValue(text, 'portico_db_pool_connections', { state: 'idle' });
    expect(total).toBeGreaterThanOrEqual(1);
    expect(total).toBeLessThanOrEqual(sut.config.database.poolSize);
    expect(idle).toBeLessThanOrEqual(total as number);
    expect(sampleValue(text, 'portico_db_pool_connections', { state: 'waiting' })).toBe(0);
  });

  it('shows the upstream calls recorded through the Metrics service', async () => {
    sut.app.get(Metrics).recordUpstreamCall('open-banking', 'getConsent', 'http_5xx', 0.4);
    const labels = { upstream: 'open-banking', operation: 'getConsent', outcome: 'http_5xx' };
    expect(sampleValue(await scrape(), 'portico_upstream_calls_total', labels)).toBe(1);
    const inProcess = await sut.app.get(Metrics).registry.metrics();
    expect(sampleValue(inProcess, 'portico_upstream_calls_total', labels)).toBe(1);
  });
});

describe('the /metrics listener at shutdown', () => {
  it('closes with the gateway', async () => {
    const sut = await startTestGateway({ METRICS_PORT: '0' }, [], { listen: true });
    const metricsUrl = sut.metricsUrl as string;
    expect((await fetch(metricsUrl)).status).toBe(200);
    await sut.close();
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});
