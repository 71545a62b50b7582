import { X509Certificate } from 'node:crypto';
import {
  children,
  DerError,
  type DerNode,
  DerTag,
  contextTag,
  expectTag,
  parseDer,
  readBoolean,
  readOctetString,
  readOid,
  readString,
  readTime,
  required,
} from './der.js';

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
  qcStatements: '1.3.6.1.5.5.7.1.3',
  qcCompliance: '0.4.0.1862.1.1',
  qcType: '0.4.0.1862.1.6',
  psd2Statement: '0.4.0.19495.2',
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
    if (Buffer.isBuffer(input) && input[0] === DerTag.SEQUENCE)
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
  qcStatements?: Buffer;
}

/** Walks tbsCertificate (RFC 5280 §4.1) for what node does not expose. */
function readTbs(der: Buffer): TbsParts {
  try {
    const [tbs] = children(expectTag(parseDer(der), DerTag.SEQUENCE, 'Certificate'));
    const fields = children(expectTag(tbs, DerTag.SEQUENCE, 'tbsCertificate'));
    const hasVersion = fields[0]?.tag === contextTag(0, true);
    const [, , , validity, subject] = fields.slice(hasVersion ? 1 : 0);
    const [notBefore, notAfter] = children(expectTag(validity, DerTag.SEQUENCE, 'validity'));
    const extensions = fields.find((field) => field.tag === contextTag(3, true));
    return {
      subject: readNameAttributes(expectTag(subject, DerTag.SEQUENCE, 'subject')),
      validFrom: readTime(required(notBefore, 'notBefore')),
      validTo: readTime(required(notAfter, 'notAfter')),
      qcStatements: extensions ? findExtension(extensions, OID.qcStatements) : undefined,
    };
  } catch (error) {
    if (error instanceof DerError)
      throw new CertificateError(`the certificate's DER is malformed: ${error.message}`);
    throw error;
  }
}

/** The first value of each attribute type in a Name. */
function readNameAttributes(name: DerNode): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const rdn of children(name)) {
    for (const pair of children(expectTag(rdn, DerTag.SET, 'relative distinguished name'))) {
      const [type, value] = children(expectTag(pair, DerTag.SEQUENCE, 'attribute'));
      const oid = readOid(type);
      if (!attributes.has(oid) && value && TEXT_TAGS.has(value.tag))
        attributes.set(oid, readString(value));
    }
  }
  return attributes;
}

const TEXT_TAGS = new Set<number>([
  DerTag.UTF8String,
  DerTag.PrintableString,
  DerTag.IA5String,
  DerTag.TeletexString,
  DerTag.VisibleString,
  DerTag.BMPString,
]);

function findExtension(explicitExtensions: DerNode, oid: string): Buffer | undefined {
  const [list] = children(explicitExtensions);
  for (const extension of children(expectTag(list, DerTag.SEQUENCE, 'extensions'))) {
    const parts = children(expectTag(extension, DerTag.SEQUENCE, 'extension'));
    if (readOid(required(parts[0], 'extnID')) !== oid) continue;
    // critical BOOLEAN DEFAULT FALSE sits between the OID and the value when present.
    if (parts.length === 3) readBoolean(parts[1]);
    return readOctetString(parts[parts.length - 1]);
  }
  return undefined;
}

interface QcStatements {
  qcCompliance: boolean;
  qcTypes: string[];
  roles: Psd2Role[];
  competentAuthority?: { name: string; id: string };
}

/** QCStatements (RFC 3739, ETSI EN 319 412-5) with the PSD2 statement of ETSI TS 119 495. */
function readQcStatements(der: Buffer): QcStatements {
  try {
    const result: QcStatements = { qcCompliance: false, qcTypes: [], roles: [] };
    for (const statement of children(expectTag(parseDer(der), DerTag.SEQUENCE, 'QCStatements'))) {
      const [id, info, ...extra] = children(expectTag(statement, DerTag.SEQUENCE, 'QCStatement'));
      if (extra.length > 0) throw new DerError('a QCStatement has more than two fields');
      switch (readOid(expectTag(id, DerTag.OID, 'statementId'))) {
        case OID.qcCompliance:
          result.qcCompliance = true;
          break;
        case OID.qcType:
          result.qcTypes = children(expectTag(info, DerTag.SEQUENCE, 'QcType')).map((type) => {
            const oid = readOid(type);
            return QC_TYPE_BY_OID[oid] ?? oid;
          });
          break;
        case OID.psd2Statement:
          Object.assign(result, readPsd2Statement(expectTag(info, DerTag.SEQUENCE, 'PSD2QcType')));
          break;
      }
    }
    return result;
  } catch (error) {
    if (error instanceof DerError)
      throw new CertificateError(
        `the qcStatements extension (${OID.qcStatements}) is malformed: ${error.message}`,
      );
    throw error;
  }
}

function readPsd2Statement(statement: DerNode): Pick<QcStatements, 'roles' | 'competentAuthority'> {
  const [rolesOfPsp, ncaName, ncaId, ...extra] = children(statement);
  if (extra.length > 0) throw new DerError('PSD2QcType has more than three fields');
  const roles: Psd2Role[] = [];
  for (const roleOfPsp of children(expectTag(rolesOfPsp, DerTag.SEQUENCE, 'rolesOfPSP'))) {
    const [oid, name] = children(expectTag(roleOfPsp, DerTag.SEQUENCE, 'RoleOfPSP'));
    const roleName = readString(expectTag(name, DerTag.UTF8String, 'roleOfPspName'));
    // The OID is authoritative; the name is the fallback for an OID not known here.
    const role = ROLE_BY_OID[readOid(oid)] ?? PSD2_ROLES.find((known) => known === roleName);
    if (role && !roles.includes(role)) roles.push(role);
  }
  return {
    roles,
    competentAuthority: {
      name: readString(expectTag(ncaName, DerTag.UTF8String, 'nCAName')),
      id: readString(expectTag(ncaId, DerTag.UTF8String, 'nCAId')),
    },
  };
}
