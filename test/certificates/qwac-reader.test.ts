import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CertificateError,
  readCertificate,
  readCertificateChain,
} from '#src/shared/qwac/qwac-reader.js';
import { freshDevCerts, issueCertificate, readIn, removeDir } from './dev-certs.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('readCertificate', () => {
  let dir: string;
  beforeAll(() => {
    dir = freshDevCerts();
  });
  afterAll(() => removeDir(dir));

  it('reads the subject, organizationIdentifier and common name of the TPP certificate', () => {
    const info = readCertificate(readIn(dir, 'tpp.pem'));
    expect(info.subject).toBe(
      'C=GR, O=Portico Sandbox TPP, CN=portico-sandbox-tpp, organizationIdentifier=PSDGR-BOG-123456',
    );
    expect(info.issuer).toBe('C=GR, O=Portico Sandbox, CN=Portico Sandbox CA');
    expect(info.organizationIdentifier).toBe('PSDGR-BOG-123456');
    expect(info.commonName).toBe('portico-sandbox-tpp');
  });

  it('reads the PSD2 roles, competent authority, QcCompliance and QcType web from the qcStatements', () => {
    const info = readCertificate(readIn(dir, 'tpp.pem'));
    expect(info.roles).toEqual(['PSP_AI', 'PSP_PI', 'PSP_IC']);
    expect(info.competentAuthority).toEqual({ name: 'Bank of Greece', id: 'GR-BOG' });
    expect(info.qcCompliance).toBe(true);
    expect(info.qcTypes).toEqual(['web']);
  });

  it('gives the same validity, fingerprint and serial as node, and whole days to expiry', () => {
    const pem = readIn(dir, 'tpp.pem');
    const node = new X509Certificate(pem);
    const info = readCertificate(pem);
    expect(info.validFrom).toEqual(new Date(node.validFrom));
    expect(info.validTo).toEqual(new Date(node.validTo));
    expect(info.fingerprintSha256).toBe(node.fingerprint256);
    expect(info.fingerprintSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(info.serialNumber).toBe(node.serialNumber);
    expect(
      readCertificate(pem, new Date(info.validTo.getTime() - 10.5 * DAY_MS)).daysToExpiry,
    ).toBe(10);
  });

  it('finds no roles and no competent authority in a certificate without the PSD2 statement', () => {
    const info = readCertificate(readIn(dir, 'tpp-noroles.pem'));
    expect(info.roles).toEqual([]);
    expect(info.competentAuthority).toBeUndefined();
    expect(info.qcCompliance).toBe(true);
  });

  it('finds only PSP_AI in the account-information-only certificate', () => {
    expect(readCertificate(readIn(dir, 'tpp-ai.pem')).roles).toEqual(['PSP_AI']);
  });

  it('reports a negative number of days for the expired certificate', () => {
    const info = readCertificate(readIn(dir, 'tpp-expired.pem'));
    expect(info.validTo).toEqual(new Date('2024-01-01T00:00:00Z'));
    expect(info.daysToExpiry).toBeLessThan(0);
    expect(info.roles).toEqual(['PSP_AI', 'PSP_PI', 'PSP_IC']);
  });

  it('reads every certificate the dev script makes, the rogue one and the CA included', () => {
    const files = readdirSync(dir).filter((file) => file.endsWith('.pem'));
    expect(files).toHaveLength(7);
    const byFile = Object.fromEntries(
      files.map((file) => [file, readCertificate(readIn(dir, file))]),
    );
    expect(byFile['tpp-rogue.pem']).toMatchObject({
      issuer: expect.stringContaining('Rogue'),
      organizationIdentifier: 'PSDGR-BOG-123456',
      roles: ['PSP_AI', 'PSP_PI', 'PSP_IC'],
    });
    expect(byFile['ca.pem']).toMatchObject({ commonName: 'Portico Sandbox CA', roles: [] });
  });

  it('reports no QWAC fields for a certificate without qcStatements', () => {
    const info = readCertificate(readIn(dir, 'sandbox.pem'));
    expect(info).toMatchObject({
      commonName: 'localhost',
      roles: [],
      qcCompliance: false,
      qcTypes: [],
    });
    expect(info.organizationIdentifier).toBeUndefined();
  });

  it('accepts a Buffer, in PEM or DER', () => {
    const pem = readFileSync(join(dir, 'tpp.pem'));
    expect(readCertificate(pem).organizationIdentifier).toBe('PSDGR-BOG-123456');
    expect(readCertificate(new X509Certificate(pem).raw).organizationIdentifier).toBe(
      'PSDGR-BOG-123456',
    );
  });

  it('falls back to the role name when the role OID is not a known one', () => {
    issueCertificate(dir, 'odd-role', {
      issuer: 'ca',
      subject: '/CN=odd-role',
      extensions: [
        '1.3.6.1.5.5.7.1.3 = ASN1:SEQUENCE:statements',
        '[statements]',
        'psd2 = SEQUENCE:psd2',
        '[psd2]',
        'id = OID:0.4.0.19495.2',
        'info = SEQUENCE:info',
        '[info]',
        'roles = SEQUENCE:roles',
        'name = UTF8:Bank of Greece',
        'ncaid = UTF8:GR-BOG',
        '[roles]',
        'role = SEQUENCE:role',
        '[role]',
        'oid = OID:0.4.0.19495.1.99',
        'name = UTF8:PSP_PI',
      ].join('\n'),
    });
    expect(readCertificate(readIn(dir, 'odd-role.pem')).roles).toEqual(['PSP_PI']);
  });

  describe('refuses malformed input with a CertificateError', () => {
    it('when there is no PEM certificate', () => {
      expect(() => readCertificate('hello')).toThrow(CertificateError);
      expect(() => readCertificate('hello')).toThrow(/no PEM certificate/);
    });

    it('when given a private key instead of a certificate', () => {
      expect(() => readCertificate(readIn(dir, 'tpp.key'))).toThrow(
        /expected a PEM certificate, found a "PRIVATE KEY" block/,
      );
    });

    it('when the PEM body is truncated', () => {
      const [head, ...lines] = readIn(dir, 'tpp.pem').trim().split('\n');
      const truncated = [head, ...lines.slice(0, 4), lines[lines.length - 1]].join('\n');
      expect(() => readCertificate(truncated)).toThrow(CertificateError);
      expect(() => readCertificate(truncated)).toThrow(
        /the certificate is not a valid X.509 certificate/,
      );
    });

    it('when DER bytes are not a certificate', () => {
      expect(() => readCertificate(Buffer.from([0x30, 0x82, 0xff, 0xff, 0x02]))).toThrow(
        CertificateError,
      );
    });

    it('when the certificate is valid but its qcStatements extension is malformed DER', () => {
      // An outer SEQUENCE whose inner SEQUENCE claims 3 bytes but has 1.
      issueCertificate(dir, 'bad-qc', {
        issuer: 'ca',
        subject: '/CN=bad-qc',
        extensions: '1.3.6.1.5.5.7.1.3 = DER:3005300306',
      });
      const pem = readIn(dir, 'bad-qc.pem');
      expect(() => new X509Certificate(pem)).not.toThrow();
      expect(() => readCertificate(pem)).toThrow(CertificateError);
      expect(() => readCertificate(pem)).toThrow(
        /qcStatements extension \(1\.3\.6\.1\.5\.5\.7\.1\.3\) is malformed: QCStatements: /,
      );
    });

    it('when the PSD2 statement has the wrong shape', () => {
      issueCertificate(dir, 'bad-psd2', {
        issuer: 'ca',
        subject: '/CN=bad-psd2',
        extensions: [
          '1.3.6.1.5.5.7.1.3 = ASN1:SEQUENCE:statements',
          '[statements]',
          'psd2 = SEQUENCE:psd2',
          '[psd2]',
          'id = OID:0.4.0.19495.2',
          'info = UTF8:PSP_AI',
        ].join('\n'),
      });
      expect(() => readCertificate(readIn(dir, 'bad-psd2.pem'))).toThrow(
        /qcStatements extension \(1\.3\.6\.1\.5\.5\.7\.1\.3\) is malformed: PSD2QcType: /,
      );
    });
  });
});

describe('readCertificateChain', () => {
  it('reads every certificate of a bundle in order', () => {
    const dir = freshDevCerts();
    try {
      const chain = readCertificateChain(readIn(dir, 'tpp.pem') + readIn(dir, 'ca.pem'));
      expect(chain.map((info) => info.commonName)).toEqual([
        'portico-sandbox-tpp',
        'Portico Sandbox CA',
      ]);
    } finally {
      removeDir(dir);
    }
  });
});
