import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { porticoClient } from '../support/inject-fetch.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('upstream failures become 502 and 504 problems', () => {
  // Stand-ins for a broken provider (outside Portico): one that answers 503 to everything, one that never answers.
  let failing: Server;
  let silent: Server;
  // And one that answers, but not what the contract says: a wrong shape, or JSON that does not parse.
  let lying: Server;
  let failingHits = 0;
  const tls = {
    key: readFileSync('certs/dev/sandbox.key'),
    cert: readFileSync('certs/dev/sandbox.pem'),
  };
  beforeAll(async () => {
    failing = createServer(tls, (_req, res) => {
      failingHits++;
      res.writeHead(503).end();
    });
    silent = createServer(tls, () => undefined);
    lying = createServer(tls, (req, res) => {
      const body = req.url?.includes('broken=json') ? '{"brands": [' : '{"brands": "none"}';
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await Promise.all(
      [failing, silent, lying].map(
        (server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve())),
      ),
    );
  });
  afterAll(() => {
    for (const server of [failing, silent, lying]) {
      server.closeAllConnections();
      server.close();
    }
  });

  const gatewayTo = (url: string) =>
    startTestGateway({ UPSTREAM_OB_BASE_URL: url, UPSTREAM_HEADERS_TIMEOUT_MS: '300' });
  const brandsVia = async (gateway: TestGateway) => {
    const { key } = await gateway.newTenantWithKey('app');
    return porticoClient(gateway, key).GET('/v1/brands', { params: { query: { refresh: true } } });
  };

  it('retries a read on 5xx a bounded number of times, then answers 502 with the upstream status', async () => {
    const gateway = await gatewayTo(
      `https://localhost:${(failing.address() as { port: number }).port}`,
    );
    try {
      const before = failingHits;
      const { response, error } = await brandsVia(gateway);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({
        type: 'urn:portico:problem:upstream-failed',
        upstream: { status: 503 },
      });
      expect(failingHits - before).toBe(3);
    } finally {
      await gateway.close();
    }
  });

  it('answers 504 when the provider does not answer in time', async () => {
    const gateway = await gatewayTo(
      `https://localhost:${(silent.address() as { port: number }).port}`,
    );
    try {
      const { response, error } = await brandsVia(gateway);
      expect(response.status).toBe(504);
      expect(error).toMatchObject({
        type: 'urn:portico:problem:upstream-timeout',
        upstream: { failure: 'timeout' },
      });
    } finally {
      await gateway.close();
    }
  });

  it('answers 502 when the provider cannot be reached', async () => {
    const gateway = await gatewayTo(`https://localhost:${await freePort()}`);
    try {
      const { response, error } = await brandsVia(gateway);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({ upstream: { failure: 'refused' } });
    } finally {
      await gateway.close();
    }
  });

  it('never retries a write: a consent creation the provider fails is tried once and kept in doubt', async () => {
    const gateway = await gatewayTo(
      `https://localhost:${(failing.address() as { port: number }).port}`,
    );
    try {
      const { key, tenantId } = await gateway.newTenantWithKey('app');
      const before = failingHits;
      const { response } = await porticoClient(gateway, key).POST('/v1/consents', {
        body: {
          brandId: 'danube-bank',
          access: { accounts: [] },
          recurringIndicator: false,
          validUntil: '2030-01-01',
          redirectUri: 'https://app.example/r',
        },
      });
      expect(response.status).toBe(502);
      expect(failingHits - before).toBe(1);
      const [row] = await gateway.dataSource.query(
        `SELECT status FROM consents WHERE tenant_id = $1`,
        [tenantId],
      );
      // A 5xx to a write says nothing about whether the bank acted: in doubt, never failed.
      expect(row.status).toBe('unknown');
    } finally {
      await gateway.close();
    }
  });
  it('answers 502 and logs the mismatch when the provider answers something that breaks its contract', async () => {
    const gateway = await gatewayTo(
      `https://localhost:${(lying.address() as { port: number }).port}`,
    );
    try {
      const { response, error } = await brandsVia(gateway);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({
        type: 'urn:portico:problem:upstream-failed',
        upstream: { failure: 'bad-response' },
      });
      const mismatch = gateway.logs.find((line) => line.includes('answer breaks the contract'));
      expect(mismatch).toContain('"operation":"listBrands"');
      expect(mismatch).toContain('body.brands');
      const metrics = await gateway.app.get(Metrics).registry.metrics();
      expect(metrics).toMatch(
        /portico_upstream_contract_mismatches_total\{upstream="open-banking",operation="listBrands"\} 1/,
      );
    } finally {
      await gateway.close();
    }
  });

  it('opens the circuit after consecutive failures: the next call is refused with 503 without reaching the provider', async () => {
    const gateway = await startTestGateway({
      UPSTREAM_OB_BASE_URL: `https://localhost:${(failing.address() as { port: number }).port}`,
      UPSTREAM_RETRY_DELAYS_MS: 'none',
      UPSTREAM_BREAKER_FAILURES: '2',
      UPSTREAM_BREAKER_OPEN_MS: '60000',
    });
    try {
      const { key } = await gateway.newTenantWithKey('app');
      const brands = () =>
        porticoClient(gateway, key).GET('/v1/brands', { params: { query: { refresh: true } } });
      const before = failingHits;
      expect((await brands()).response.status).toBe(502);
      expect((await brands()).response.status).toBe(502);
      const refused = await brands();
      expect(refused.response.status).toBe(503);
      expect(refused.error).toMatchObject({ upstream: { failure: 'circuit-open' } });
      expect(refused.response.headers.get('retry-after')).not.toBeNull();
      expect(failingHits - before).toBe(2);
      const metrics = await gateway.app.get(Metrics).registry.metrics();
      expect(metrics).toMatch(
        /portico_upstream_breaker_state\{upstream="open-banking",key="\*"\} 2/,
      );
    } finally {
      await gateway.close();
    }
  });

  it('answers 504 within the deadline however many retries are left', async () => {
    const gateway = await startTestGateway({
      UPSTREAM_OB_BASE_URL: `https://localhost:${(silent.address() as { port: number }).port}`,
      UPSTREAM_HEADERS_TIMEOUT_MS: '10000',
      UPSTREAM_DEADLINE_MS: '700',
    });
    try {
      const { response } = await brandsVia(gateway);
      expect(response.status).toBe(504);
      const line = gateway.logs.find((l) => l.includes('"path":"/v1/brands"'));
      expect(JSON.parse(line as string).durationMs).toBeLessThan(5000);
    } finally {
      await gateway.close();
    }
  });
});
