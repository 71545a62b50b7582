import { X509Certificate } from 'node:crypto';
import { AsnParser } from '@peculiar/asn1-schema';
import { Certificate, type Name } from '@peculiar/asn1-x509';
import { id_pe_qcStatements, QCStatements } from '@peculiar/asn1-x509-qualified';
import {
  id_etsi_psd2_qcStatement,
  id_etsi_qcs_QcCompliance,
  id_etsi_qcs_QcType,
  Psd2QcType,
  QcType,
} from './etsi-qc-statements.js';

/** PSD2 roles of a payment service provider (ETSI TS 119 495). */
export type Psd2Role = 'PSP_AS' | 'PSP_PI' | 'PSP_AI' | 'PSP_IC';
export const PSD2_ROLES: readonly Psd2Role[] = ['PSP_AS', 'PSP_PI', 'PSP_AI', 'PSP_IC'];

export interface CertificateInfo {
  /** As node's X509Certificate.subject, on one line, comma separated. */
  subject: string;
  issuer: string;
  /** OID 2.5.4.97, e.g. "PSDGR-BOG-123456". */
  organizationIdentifier?: string;
  commonName?: string;
  roles: Psd2Role[];
  /** The national competent authority named in the PSD2 statement. */
  competentAuthority?: { name: string; id: string };
  qcCompliance: boolean;
  /** 'esign', 'eseal', 'web', or the dotted OID of a type not known here. */
  qcTypes: string[];
  validFrom: Date;
  validTo: Date;
  /** Whole days from `now` to validTo, rounded down; negative once expired. */
  daysToExpiry: number;
  /** Colon-separated upper-case hex, as node gives it. */
  fingerprintSha256: string;
  serialNumber: string;
}

/** The input is not a certificate, or a certificate with a malformed part this reader needs. */
export class CertificateError extends Error {
  override name = 'CertificateError';
}

const OID = {
  organizationIdentifier: '2.5.4.97',
  commonName: '2.5.4.3',
} as const;

const ROLE_BY_OID: Record<string, Psd2Role> = {
  '0.4.0.19495.1.1': 'PSP_AS',
  '0.4.0.19495.1.2': 'PSP_PI',
  '0.4.0.19495.1.3': 'PSP_AI',
  '0.4.0.19495.1.4': 'PSP_IC',
};

const QC_TYPE_BY_OID: Record<string, string> = {
  '0.4.0.1862.1.6.1': 'esign',
  '0.4.0.1862.1.6.2': 'eseal',
  '0.4.0.1862.1.6.3': 'web',
};

const DAY_MS = 24 * 60 * 60 * 1000;
/** The identifier octet a DER certificate starts with. */
const DER_SEQUENCE = 0x30;

/** The first certificate of a PEM (or DER) input. */
export function readCertificate(pem: string | Buffer, now: Date = new Date()): CertificateInfo {
  return describeCertificate(parseCertificates(pem)[0], now);
}

/** Every certificate in a PEM bundle, in file order. */
export function readCertificateChain(
  pem: string | Buffer,
  now: Date = new Date(),
): CertificateInfo[] {
  return parseCertificates(pem).map((certificate) => describeCertificate(certificate, now));
}

/** Node certificate objects for every certificate in a PEM bundle, or for a single DER certificate. */
export function parseCertificates(input: string | Buffer): X509Certificate[] {
  const text = typeof input === 'string' ? input : input.toString('latin1');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  if (!blocks) {
    if (Buffer.isBuffer(input) && input[0] === DER_SEQUENCE)
      return [toX509(input, 'the DER input')];
    const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(text)?.[1];
    throw new CertificateError(
      label
        ? `expected a PEM certificate, found a "${label}" block`
        : 'no PEM certificate ("-----BEGIN CERTIFICATE-----") found',
    );
  }
  return blocks.map((block, index) =>
    toX509(block, blocks.length > 1 ? `certificate ${index + 1} of the bundle` : 'the certificate'),
  );
}

export function describeCertificate(
  certificate: X509Certificate,
  now: Date = new Date(),
): CertificateInfo {
  const tbs = readTbs(certificate.raw);
  const subjectAttributes = tbs.subject;
  const qc = tbs.qcStatements ? readQcStatements(tbs.qcStatements) : undefined;
  return {
    subject: oneLineName(certificate.subject),
    issuer: oneLineName(certificate.issuer),
    organizationIdentifier: subjectAttributes.get(OID.organizationIdentifier),
    commonName: subjectAttributes.get(OID.commonName),
    roles: qc?.roles ?? [],
    competentAuthority: qc?.competentAuthority,
    qcCompliance: qc?.qcCompliance ?? false,
    qcTypes: qc?.qcTypes ?? [],
    validFrom: tbs.validFrom,
    validTo: tbs.validTo,
    daysToExpiry: Math.floor((tbs.validTo.getTime() - now.getTime()) / DAY_MS),
    fingerprintSha256: certificate.fingerprint256,
    serialNumber: certificate.serialNumber,
  };
}

function toX509(input: string | Buffer, what: string): X509Certificate {
  try {
    return new X509Certificate(input);
  } catch (error) {
    throw new CertificateError(
      `${what} is not a valid X.509 certificate: ${(error as Error).message}`,
    );
  }
}

/** Node gives names one attribute per line; reports and logs want them on one. */
export function oneLineName(name: string): string {
  return name.split('\n').join(', ');
}

interface TbsParts {
  subject: Map<string, string>;
  validFrom: Date;
  validTo: Date;
  /** The contents of the qcStatements extension's OCTET STRING, when present. */
  qcStatements?: ArrayBuffer;
}

/** What node does not expose of tbsCertificate (RFC 5280 §4.1): the subject's attributes, the extensions. */
function readTbs(der: Buffer): TbsParts {
  let tbs: Certificate['tbsCertificate'];
  try {
    tbs = AsnParser.parse(der, Certificate).tbsCertificate;
  } catch (error) {
    throw new CertificateError(`the certificate's DER is malformed: ${messageOf(error)}`);
  }
  return {
    subject: nameAttributes(tbs.subject),
    validFrom: tbs.validity.notBefore.getTime(),
    validTo: tbs.validity.notAfter.getTime(),
    qcStatements: tbs.extensions?.find((extension) => extension.extnID === id_pe_qcStatements)
      ?.extnValue.buffer,
  };
}

/** The first textual value of each attribute type in a Name. */
function nameAttributes(name: Name): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const { type, value } of name.flat()) {
    const text =
      value.utf8String ??
      value.printableString ??
      value.ia5String ??
      value.teletexString ??
      value.bmpString ??
      value.universalString;
    if (text !== undefined && !attributes.has(type)) attributes.set(type, text);
  }
  return attributes;
}

interface QcStatements {
  qcCompliance: boolean;
  qcTypes: string[];
  roles: Psd2Role[];
  competentAuthority?: { name: string; id: string };
}

/** QCStatements (RFC 3739, ETSI EN 319 412-5) with the PSD2 statement of ETSI TS 119 495. */
function readQcStatements(der: ArrayBuffer): QcStatements {
  const result: QcStatements = { qcCompliance: false, qcTypes: [], roles: [] };
  for (const { statementId, statementInfo } of parseQc(der, QCStatements, 'QCStatements')) {
    switch (statementId) {
      case id_etsi_qcs_QcCompliance:
        result.qcCompliance = true;
        break;
      case id_etsi_qcs_QcType:
        result.qcTypes = parseQc(statementInfo, QcType, 'QcType').map(
          (oid) => QC_TYPE_BY_OID[oid] ?? oid,
        );
        break;
      case id_etsi_psd2_qcStatement:
        Object.assign(result, psd2Statement(parseQc(statementInfo, Psd2QcType, 'PSD2QcType')));
        break;
    }
  }
  return result;
}

function psd2Statement(statement: Psd2QcType): Pick<QcStatements, 'roles' | 'competentAuthority'> {
  const roles: Psd2Role[] = [];
  for (const { roleOfPspOid, roleOfPspName } of statement.rolesOfPsp) {
    // The OID is authoritative; the name is the fallback for an OID not known here.
    const role = ROLE_BY_OID[roleOfPspOid] ?? PSD2_ROLES.find((known) => known === roleOfPspName);
    if (role && !roles.includes(role)) roles.push(role);
  }
  return { roles, competentAuthority: { name: statement.nCAName, id: statement.nCAId } };
}

/** Parses one part of the qcStatements extension; `what` names it when it is malformed. */
function parseQc<T>(der: ArrayBuffer | undefined, type: new () => T, what: string): T {
  try {
    if (!der) throw new Error('missing');
    return AsnParser.parse(der, type);
  } catch (error) {
    throw new CertificateError(
      `the qcStatements extension (${id_pe_qcStatements}) is malformed: ${what}: ${messageOf(error)}`,
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
