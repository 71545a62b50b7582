import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { requestContext } from '#src/platform/logging/request-context.js';
import { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { UpstreamError } from '#src/upstreams/http/upstream-errors.js';
import type { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

const CERTS = 'certs/dev';
const contract = new Psd2Contract();
/** A concrete path for every operation of the contract, with made-up ids. */
const samplePaths = contract.operations.map((op) => ({
  operationId: op.operationId,
  method: op.method,
  path: op.path
    .replace('{brandId}', 'alpha-bank')
    .replace('{paymentProduct}', 'sepa-credit-transfers')
    .replace(/\{[^}]+\}/g, 'x1'),
}));

async function failureOf(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('mutual TLS between the gateway transport and the sandbox', () => {
  let sandbox: RunningSandbox;
  const transports: UpstreamTransport[] = [];
  const transport = (name: string, caFile?: string) => {
    const created = transportTo(sandbox.openBankingUrl, devTlsFiles(CERTS, name, caFile));
    transports.push(created);
    return created;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({
      certsDir: CERTS,
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await sandbox.close();
  });

  it('lets the QWAC-shaped tpp certificate in', async () => {
    const response = await transport('tpp').send({ method: 'GET', path: '/brands' });
    expect(response.status).toBe(200);
    expect((response.body as { brands: unknown[] }).brands.length).toBeGreaterThanOrEqual(3);
  });

  it.each(['tpp-expired', 'tpp-rogue'])('refuses %s at the handshake', async (name) => {
    const before = sandbox.tlsHandshakes();
    const failure = await failureOf(transport(name).send({ method: 'GET', path: '/brands' }));
    expect(['tls', 'connection']).toContain(failure.kind);
    expect(sandbox.tlsHandshakes()).toBe(before);
  });

  it('refuses a client without a certificate at the handshake', async () => {
    const before = sandbox.tlsHandshakes();
    const files = devTlsFiles(CERTS, 'tpp');
    const bare = transportTo(sandbox.openBankingUrl, files);
    transports.push(bare);
    // Same CA trust, no client certificate.
    const noCert = transportTo(sandbox.openBankingUrl, files, {
      tls: { current: () => ({ ca: bare.options.tls.current().ca, version: 1 }) },
    });
    transports.push(noCert);
    const failure = await failureOf(noCert.send({ method: 'GET', path: '/brands' }));
    expect(['tls', 'connection']).toContain(failure.kind);
    expect(sandbox.tlsHandshakes()).toBe(before);
  });

  it('answers a certificate without PSD2 roles with 401 CERTIFICATE_INVALID on every open-banking API', async () => {
    const noRoles = transport('tpp-noroles');
    for (const { method, path, operationId } of samplePaths) {
      const response = await noRoles.send({
        method,
        path,
        json: method === 'POST' ? {} : undefined,
      });
      expect({
        operationId,
        status: response.status,
        code: (response.body as { tppMessages: { code: string }[] }).tppMessages?.[0]?.code,
      }).toEqual({
        operationId,
        status: 401,
        code: 'CERTIFICATE_INVALID',
      });
    }
  });

  it('answers a PSP_AI-only certificate with 401 CERTIFICATE_INVALID for payments and confirmation of funds only', async () => {
    const aisOnly = transport('tpp-ai');
    for (const { method, path, operationId } of samplePaths) {
      const response = await aisOnly.send({
        method,
        path,
        json: method === 'POST' ? {} : undefined,
      });
      const code = (response.body as { tppMessages?: { code: string }[] } | undefined)
        ?.tppMessages?.[0]?.code;
      const refused = response.status === 401 && code === 'CERTIFICATE_INVALID';
      const needsOtherRole = /payments|funds-confirmations|confirmation-of-funds/.test(path);
      expect({ operationId, refused }).toEqual({ operationId, refused: needsOtherRole });
    }
  });

  it('refuses a sandbox whose server certificate does not chain to the configured CA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-other-ca-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, 'other.key'),
        '-out',
        join(dir, 'other.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=Some other CA',
      ],
      { stdio: 'pipe' },
    );
    const failure = await failureOf(
      transport('tpp', join(dir, 'other.pem')).send({ method: 'GET', path: '/brands' }),
    );
    expect(failure.kind).toBe('tls');
  });

  it('forwards the request id of the current request upstream', async () => {
    const requestId = randomUUID();
    const response = await requestContext.run({ requestId }, () =>
      transport('tpp').send({ method: 'GET', path: '/brands' }),
    );
    expect(response.headers['x-request-id']).toBe(requestId);
  });

  it('reuses pooled connections: 1,000 sequential calls cost one TLS handshake per pooled connection, not one per call', async () => {
    const pooled = transport('tpp');
    const before = sandbox.tlsHandshakes();
    for (let i = 0; i < 1000; i++) {
      const response = await pooled.send({ method: 'GET', path: '/brands' });
      if (response.status !== 200) throw new Error(`call ${i} answered ${response.status}`);
    }
    // The pool holds at most 4 connections; undici may open a second one when a call follows the previous
    // response within the same tick, before the first connection is back in the pool.
    const handshakes = sandbox.tlsHandshakes() - before;
    expect(handshakes).toBeGreaterThanOrEqual(1);
    expect(handshakes).toBeLessThanOrEqual(pooled.options.poolConnections);
  });

  it('presents a replaced certificate on new connections without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-rotate-'));
    for (const file of ['tpp.pem', 'tpp.key', 'ca.pem'])
      copyFileSync(join(CERTS, file), join(dir, file));
    // The files are looked at on every call here; the cadence itself is client-credentials.spec.ts's.
    const rotating = transportTo(
      sandbox.openBankingUrl,
      {
        certFile: join(dir, 'tpp.pem'),
        keyFile: join(dir, 'tpp.key'),
        caFile: join(dir, 'ca.pem'),
        clientCaFile: join(dir, 'ca.pem'),
      },
      {},
      0,
    );
    transports.push(rotating);
    const payment = {
      method: 'GET' as const,
      path: '/alpha-bank/bg/v1/payments/sepa-credit-transfers/unknown-payment/status',
    };
    expect((await rotating.send(payment)).status).not.toBe(401);

    // Renewal in place: the new certificate carries only PSP_AI, so the payments API must now refuse it.
    copyFileSync(join(CERTS, 'tpp-ai.pem'), join(dir, 'tpp.pem'));
    copyFileSync(join(CERTS, 'tpp-ai.key'), join(dir, 'tpp.key'));
    const handshakesBefore = sandbox.tlsHandshakes();
    const after = await rotating.send(payment);
    expect(after.status).toBe(401);
    expect((after.body as { tppMessages: { code: string }[] }).tppMessages[0].code).toBe(
      'CERTIFICATE_INVALID',
    );
    expect(sandbox.tlsHandshakes()).toBe(handshakesBefore + 1);
  });
});
