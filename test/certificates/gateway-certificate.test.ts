import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runProcess } from '../support/processes.js';
import {
  bearer,
  startTestGateway,
  testDatabaseUrl,
  type TestGateway,
} from '../support/test-gateway.js';

const CERTS = 'certs/dev';

describe('the gateway and its client certificate', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('reports the certificate and the upstream in readiness, with days to expiry', async () => {
    const operator = (await gateway.newTenantWithKey('operator')).key;
    const ready = await gateway.app.inject({
      method: 'GET',
      url: '/health/ready',
      headers: bearer(operator),
    });
    expect(ready.statusCode).toBe(200);
    const { checks } = ready.json();
    expect(checks.certificate).toMatchObject({ status: 'ok', daysToExpiry: expect.any(Number) });
    expect(checks.certificate.daysToExpiry).toBeGreaterThan(30);
    expect(checks.certificate.detail).toContain('PSDGR-BOG-123456');
    expect(checks.upstream).toMatchObject({ status: 'ok' });
    expect(checks.upstream.detail).toMatch(/GET \/brands answered 200/);
  });

  it('prints what cert:inspect reads from the QWAC-shaped certificate', async () => {
    const result = await runProcess('dist/cli/main.js', ['cert:inspect', `${CERTS}/tpp.pem`], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/organizationIdentifier\s+PSDGR-BOG-123456/);
    expect(result.stdout).toMatch(/PSD2 roles\s+PSP_AI, PSP_PI, PSP_IC|PSD2 roles\s+.*PSP_AI.*/);
    for (const role of ['PSP_AI', 'PSP_PI', 'PSP_IC']) expect(result.stdout).toContain(role);
    expect(result.stdout).toMatch(/competent authority\s+Bank of Greece \(GR-BOG\)/);
  });

  const production = (cert: string, extra: Record<string, string> = {}) =>
    runProcess('dist/main.js', [], {
      PORTICO_MODE: 'production',
      PORT: '0',
      DATABASE_URL: testDatabaseUrl(),
      UPSTREAM_OB_BASE_URL: 'https://localhost:9',
      UPSTREAM_CLIENT_CERT_FILE: `${CERTS}/${cert}.pem`,
      UPSTREAM_CLIENT_KEY_FILE: `${CERTS}/${cert}.key`,
      UPSTREAM_CA_FILE: `${CERTS}/ca.pem`,
      ...extra,
    });

  it('refuses to start in production mode with a certificate that lacks a role of an enabled service', async () => {
    const result = await production('tpp-ai', { OPEN_BANKING_SERVICES: 'ais,pis' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the client certificate (QWAC) cannot be used');
    expect(result.stderr).toMatch(/PSP_PI/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses to start in production mode with an expired certificate or a key of another certificate', async () => {
    const expired = await production('tpp-expired');
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/expired/);
    const mismatched = await production('tpp', { UPSTREAM_CLIENT_KEY_FILE: `${CERTS}/tpp-ai.key` });
    expect(mismatched.code).toBe(1);
    expect(mismatched.stderr).toMatch(/private key does not belong/);
  });

  it('refuses to start in production mode with a certificate that does not chain to the CA bundle', async () => {
    const result = await production('tpp-rogue');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/chain|issuer|CA/i);
  });
});
