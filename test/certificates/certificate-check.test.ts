import { createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  checkClientCertificate,
  type ClientCertificateCheckInput,
} from '#src/upstreams/open-banking/qwac/certificate-check.js';
import { readCertificate } from '#src/shared/qwac/qwac-reader.js';
import { freshDevCerts, issueCertificate, readIn, removeDir } from './dev-certs.js';

const ALL_ROLES = ['PSP_AI', 'PSP_PI', 'PSP_IC'] as const;
const DAY_MS = 24 * 60 * 60 * 1000;

describe('checkClientCertificate', () => {
  let dir: string;
  const inputFor = (
    name: string,
    overrides: Partial<ClientCertificateCheckInput> = {},
  ): ClientCertificateCheckInput => ({
    certPem: readIn(dir, `${name}.pem`),
    keyPem: readIn(dir, `${name}.key`),
    caPem: readIn(dir, 'ca.pem'),
    requiredRoles: ALL_ROLES,
    ...overrides,
  });

  beforeAll(() => {
    dir = freshDevCerts();
  });
  afterAll(() => removeDir(dir));

  it('accepts the TPP certificate with its key, the sandbox CA and all three roles', () => {
    const result = checkClientCertificate(inputFor('tpp'));
    expect(result).toMatchObject({ ok: true, problems: [], warnings: [] });
    expect(result.info.organizationIdentifier).toBe('PSDGR-BOG-123456');
  });

  it('reports an expired certificate with the date it expired', () => {
    const result = checkClientCertificate(inputFor('tpp-expired'));
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([
      expect.stringMatching(
        /^the client certificate expired on 2024-01-01T00:00:00.000Z \(\d+ day\(s\) ago\)$/,
      ),
    ]);
  });

  it('reports a certificate that is not valid yet', () => {
    const validFrom = readCertificate(readIn(dir, 'tpp.pem')).validFrom;
    const result = checkClientCertificate(
      inputFor('tpp', { now: new Date(validFrom.getTime() - DAY_MS) }),
    );
    // The CA, made moments earlier, is not valid yet either; that is reported too.
    expect(result.problems).toContain(
      `the client certificate is not valid until ${validFrom.toISOString()}`,
    );
  });

  it('warns, without failing, when fewer than 30 days remain', () => {
    const validTo = readCertificate(readIn(dir, 'tpp.pem')).validTo;
    const result = checkClientCertificate(
      inputFor('tpp', { now: new Date(validTo.getTime() - 12.5 * DAY_MS) }),
    );
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([
      `the client certificate expires in 12 day(s), on ${validTo.toISOString()}`,
    ]);
  });

  it('fails the chain check for a certificate signed by a CA outside the bundle', () => {
    const result = checkClientCertificate(inputFor('tpp-rogue'));
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([
      'the client certificate is not signed by any CA in the CA bundle (its issuer is "C=GR, O=Portico Sandbox, CN=Rogue CA")',
    ]);
  });

  it('detects a private key that belongs to another certificate', () => {
    const result = checkClientCertificate(inputFor('tpp', { keyPem: readIn(dir, 'tpp-ai.key') }));
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([
      'the private key does not belong to the client certificate (their public keys differ)',
    ]);
  });

  it('names the missing roles and what they are needed for', () => {
    const result = checkClientCertificate(inputFor('tpp-ai'));
    expect(result.problems).toEqual([
      'the client certificate lacks PSD2 role(s) PSP_PI, PSP_IC needed by: payment initiation, confirmation of funds (it has PSP_AI)',
    ]);
    expect(checkClientCertificate(inputFor('tpp-ai', { requiredRoles: ['PSP_AI'] })).ok).toBe(true);
  });

  it('says when the certificate has no PSD2 roles at all', () => {
    const result = checkClientCertificate(inputFor('tpp-noroles', { requiredRoles: ['PSP_AI'] }));
    expect(result.problems).toEqual([
      'the client certificate lacks PSD2 role(s) PSP_AI needed by: account information (it has no PSD2 roles)',
    ]);
  });

  it('reads an encrypted key with its passphrase, and says when the passphrase is missing or wrong', () => {
    const encrypted = createPrivateKey(readIn(dir, 'tpp.key')).export({
      format: 'pem',
      type: 'pkcs8',
      cipher: 'aes-256-cbc',
      passphrase: 'sesame',
    });
    expect(
      checkClientCertificate(inputFor('tpp', { keyPem: encrypted, keyPassphrase: 'sesame' })).ok,
    ).toBe(true);
    expect(checkClientCertificate(inputFor('tpp', { keyPem: encrypted })).problems).toEqual([
      'the private key is encrypted and no passphrase was given',
    ]);
    expect(
      checkClientCertificate(inputFor('tpp', { keyPem: encrypted, keyPassphrase: 'wrong' }))
        .problems,
    ).toEqual(['the private key could not be decrypted: wrong passphrase?']);
  });

  it('reports a client certificate without clientAuth in its extended key usage', () => {
    const result = checkClientCertificate({ ...inputFor('sandbox'), requiredRoles: [] });
    expect(result.problems).toEqual([
      'the client certificate is not for TLS client authentication (extendedKeyUsage lacks clientAuth)',
    ]);
  });

  it('walks an intermediate CA included in the certificate file', () => {
    issueCertificate(dir, 'intermediate', {
      issuer: 'ca',
      subject: '/CN=Portico Sandbox Intermediate',
      extensions: 'basicConstraints = critical, CA:true\nkeyUsage = critical, keyCertSign',
    });
    issueCertificate(dir, 'leaf', {
      issuer: 'intermediate',
      subject: '/CN=leaf',
      extensions: 'extendedKeyUsage = clientAuth',
    });
    const leafOnly = inputFor('leaf', { requiredRoles: [] });
    expect(checkClientCertificate(leafOnly).problems).toEqual([
      'the client certificate is not signed by any CA in the CA bundle (its issuer is "CN=Portico Sandbox Intermediate")',
    ]);
    const withIntermediate = {
      ...leafOnly,
      certPem: readIn(dir, 'leaf.pem') + readIn(dir, 'intermediate.pem'),
    };
    expect(checkClientCertificate(withIntermediate)).toMatchObject({ ok: true, problems: [] });
  });

  it('reports an unreadable CA bundle as a problem, and an unreadable certificate as a thrown error', () => {
    expect(checkClientCertificate(inputFor('tpp', { caPem: 'nothing here' })).problems).toEqual([
      'the CA bundle cannot be read: no PEM certificate ("-----BEGIN CERTIFICATE-----") found',
    ]);
    expect(() => checkClientCertificate(inputFor('tpp', { certPem: 'nothing here' }))).toThrow(
      /no PEM certificate/,
    );
  });
});
