import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { porticoClient } from '../support/inject-fetch.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('upstream failures become 502 and 504 problems', () => {
  // Stand-ins for a broken provider (outside Portico): one that answers 503 to everything, one that never answers.
  let failing: Server;
  let silent: Server;
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
    await Promise.all(
      [failing, silent].map(
        (server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve())),
      ),
    );
  });
  afterAll(() => {
    for (const server of [failing, silent]) {
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

  it('never retries a write: a consent creation the provider fails is tried once and marked failed', async () => {
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
      expect(row.status).toBe('failed');
    } finally {
      await gateway.close();
    }
  });
});
