import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { CertificateError } from '../../../shared/qwac/qwac-reader.js';

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const PRIVATE_KEY =
  /-----BEGIN (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----\n?/;

function exportPem(file: string, passphrase: string, legacy: boolean): string {
  return execFileSync(
    'openssl',
    [
      'pkcs12',
      '-in',
      file,
      '-nodes',
      '-passin',
      'env:PORTICO_P12_PASSPHRASE',
      ...(legacy ? ['-legacy'] : []),
    ],
    {
      // The passphrase goes to openssl through its environment, never its command line; PATH lets it be found.
      // eslint-disable-next-line no-restricted-properties -- only PATH is passed on
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORTICO_P12_PASSPHRASE: passphrase },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    },
  );
}

/**
 * A PKCS#12 file (.p12/.pfx) as PEM: the client certificate first, then its chain, and the private key.
 * Node cannot read PKCS#12 contents, so openssl does it (with its legacy provider for older files).
 */
export function readPkcs12(file: string, passphrase = ''): { cert: Buffer; key: Buffer } {
  let pem: string;
  try {
    pem = exportPem(file, passphrase, false);
  } catch {
    try {
      pem = exportPem(file, passphrase, true);
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '');
      const reason = /mac verify|invalid password|bad decrypt/i.test(stderr)
        ? 'wrong passphrase'
        : stderr.split('\n')[0] || 'unreadable';
      throw new CertificateError(`cannot read the PKCS#12 file ${file}: ${reason}`);
    }
  }
  const key = PRIVATE_KEY.exec(pem)?.[0];
  const certificates = pem.match(CERTIFICATE) ?? [];
  if (!key || certificates.length === 0)
    throw new CertificateError(
      `the PKCS#12 file ${file} must hold a certificate and its private key`,
    );
  const privateKey = createPrivateKey(key);
  // The leaf is the certificate of the private key; the others are its chain.
  const ordered = [...certificates].sort(
    (a, b) =>
      Number(new X509Certificate(b).checkPrivateKey(privateKey)) -
      Number(new X509Certificate(a).checkPrivateKey(privateKey)),
  );
  return { cert: Buffer.from(ordered.join('')), key: Buffer.from(key) };
}
