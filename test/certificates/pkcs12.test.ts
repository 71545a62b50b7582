import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientCredentials } from '../../src/upstreams/open-banking/qwac/client-credentials.js';
import { CertificateError } from '../../src/shared/qwac/qwac-reader.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/sandbox.js';
import { transportTo } from '../support/upstream.js';

describe('a QWAC given as PKCS#12', () => {
  let dir: string;
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-p12-'));
    writeFileSync(join(dir, 'pass'), 's3cret-pass');
    execFileSync(
      'openssl',
      [
        'pkcs12',
        '-export',
        '-in',
        'certs/dev/tpp.pem',
        '-inkey',
        'certs/dev/tpp.key',
        '-certfile',
        'certs/dev/ca.pem',
        '-out',
        join(dir, 'qwac.p12'),
        '-passout',
        `file:${join(dir, 'pass')}`,
      ],
      { stdio: 'pipe' },
    );
    sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
  });
  afterAll(() => sandbox.close());

  it('is read with its passphrase: the leaf certificate first, and it authenticates to the sandbox', async () => {
    const files = {
      p12File: join(dir, 'qwac.p12'),
      keyPassphrase: 's3cret-pass',
      caFile: 'certs/dev/ca.pem',
      clientCaFile: 'certs/dev/ca.pem',
    };
    expect(new ClientCredentials(files).current().info).toMatchObject({
      organizationIdentifier: 'PSDGR-BOG-123456',
      roles: ['PSP_AI', 'PSP_PI', 'PSP_IC'],
    });
    const transport = transportTo(sandbox.openBankingUrl, files);
    expect((await transport.send({ method: 'GET', path: '/brands' })).status).toBe(200);
    await transport.close();
  });

  it('names a wrong passphrase', () => {
    expect(
      () =>
        new ClientCredentials({
          p12File: join(dir, 'qwac.p12'),
          keyPassphrase: 'wrong',
          caFile: 'certs/dev/ca.pem',
          clientCaFile: 'certs/dev/ca.pem',
        }),
    ).toThrow(CertificateError);
    expect(
      () =>
        new ClientCredentials({
          p12File: join(dir, 'qwac.p12'),
          keyPassphrase: 'wrong',
          caFile: 'certs/dev/ca.pem',
          clientCaFile: 'certs/dev/ca.pem',
        }),
    ).toThrow(/wrong passphrase/);
  });
});
