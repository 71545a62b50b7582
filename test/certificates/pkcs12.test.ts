import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { CertificateStatusService } from '#src/upstreams/open-banking/qwac/certificate-status.service.js';
import { ClientCredentials } from '#src/upstreams/open-banking/qwac/client-credentials.js';
import { CertificateError } from '#src/shared/qwac/qwac-reader.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { transportTo } from '../support/upstream.js';

/** Packs a certificate, its key and the CA into a PKCS#12 file with openssl, as an operator would. */
function exportPkcs12(
  out: string,
  passphraseFile: string,
  options: { cert?: string; key?: string; legacy?: boolean } = {},
): void {
  execFileSync(
    'openssl',
    [
      'pkcs12',
      '-export',
      ...(options.legacy ? ['-legacy'] : []),
      '-in',
      options.cert ?? 'certs/dev/tpp.pem',
      '-inkey',
      options.key ?? 'certs/dev/tpp.key',
      '-certfile',
      'certs/dev/ca.pem',
      '-out',
      out,
      '-passout',
      `file:${passphraseFile}`,
    ],
    { stdio: 'pipe' },
  );
}

/** A logger that keeps what it was told. */
function recordingLogger() {
  const lines: { level: 'info' | 'warn'; fields: object; message: string }[] = [];
  return {
    lines,
    info: (fields: object, message: string) => lines.push({ level: 'info', fields, message }),
    warn: (fields: object, message: string) => lines.push({ level: 'warn', fields, message }),
  };
}

describe('a QWAC given as PKCS#12', () => {
  let dir: string;
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-p12-'));
    writeFileSync(join(dir, 'pass'), 's3cret-pass');
    writeFileSync(join(dir, 'other-pass'), 'another-pass');
    exportPkcs12(join(dir, 'qwac.p12'), join(dir, 'pass'));
    exportPkcs12(join(dir, 'other-pass.p12'), join(dir, 'other-pass'));
    exportPkcs12(join(dir, 'legacy.p12'), join(dir, 'pass'), { legacy: true });
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

  it('reads a legacy file (3DES and RC2-40, SHA-1 MAC) the same way', () => {
    const credentials = new ClientCredentials({
      p12File: join(dir, 'legacy.p12'),
      keyPassphrase: 's3cret-pass',
      caFile: 'certs/dev/ca.pem',
      clientCaFile: 'certs/dev/ca.pem',
    });
    expect(credentials.current().info.organizationIdentifier).toBe('PSDGR-BOG-123456');
    expect(credentials.current().key.toString()).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('names a file that is not PKCS#12', () => {
    expect(
      () =>
        new ClientCredentials({
          p12File: 'certs/dev/tpp.pem',
          keyPassphrase: 's3cret-pass',
          caFile: 'certs/dev/ca.pem',
          clientCaFile: 'certs/dev/ca.pem',
        }),
    ).toThrow(/cannot read the PKCS#12 file certs\/dev\/tpp\.pem: not a readable PKCS#12 file/);
  });

  it('reports a changed file that cannot be read once, keeps the previous certificate, and takes the next good file', () => {
    const file = join(dir, 'rotating.p12');
    copyFileSync(join(dir, 'qwac.p12'), file);
    const logger = recordingLogger();
    const sut = new ClientCredentials(
      {
        p12File: file,
        keyPassphrase: 's3cret-pass',
        caFile: 'certs/dev/ca.pem',
        clientCaFile: 'certs/dev/ca.pem',
      },
      logger,
    );
    const status = new CertificateStatusService(
      sut,
      { mode: 'sandbox', openBankingServices: ['ais', 'pis', 'cof'] } as AppConfig,
      { info: () => undefined, warn: () => undefined } as never,
    );

    // The clock of the looks: one a second.
    const start = Date.now();
    const at = (second: number) => start + second * 1000;

    // Renewed with a passphrase the gateway does not have; looked at every second for ten seconds.
    copyFileSync(join(dir, 'other-pass.p12'), file);
    for (let second = 1; second <= 10; second++) {
      expect(sut.current(at(second)).version).toBe(1);
    }
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        fields: { problem: expect.stringMatching(/wrong passphrase.*previous certificate stays/) },
        message: 'client certificate not reloaded',
      },
    ]);
    const check = status.check(new Date(at(10.5)));
    expect(check.ok).toBe(true);
    expect(check.warnings).toEqual([expect.stringMatching(/rotating\.p12: wrong passphrase/)]);

    // Corrupted in another way: a new change, so it is read and reported again, once.
    writeFileSync(file, 'not a PKCS#12 file');
    for (let second = 11; second <= 15; second++) sut.current(at(second));
    expect(logger.lines.map((line) => line.message)).toEqual([
      'client certificate not reloaded',
      'client certificate not reloaded',
    ]);
    expect(sut.reloadProblem()).toMatch(/not a readable PKCS#12 file/);

    // The good file back: taken at the next look, and the problem is gone.
    copyFileSync(join(dir, 'qwac.p12'), file);
    expect(sut.current(at(16)).version).toBe(2);
    expect(sut.reloadProblem()).toBeUndefined();
    expect(logger.lines.at(-1)).toMatchObject({
      level: 'info',
      message: 'client certificate reloaded',
    });
    expect(status.check(new Date(at(17))).warnings).toEqual([]);
  });
});
