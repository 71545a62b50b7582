import { createPrivateKey, type KeyObject, type X509Certificate } from 'node:crypto';
import {
  CertificateError,
  type CertificateInfo,
  describeCertificate,
  oneLineName,
  parseCertificates,
  type Psd2Role,
} from '#src/shared/qwac/qwac-reader.js';

/** What each PSD2 role lets the gateway do with the provider; used to explain a missing role. */
export const PSD2_ROLE_USES: Record<Psd2Role, string> = {
  PSP_AS: 'account servicing',
  PSP_PI: 'payment initiation',
  PSP_AI: 'account information',
  PSP_IC: 'confirmation of funds',
};

export interface ClientCertificateCheckInput {
  /** The client certificate, optionally followed by its intermediates. */
  certPem: string | Buffer;
  keyPem: string | Buffer;
  keyPassphrase?: string;
  /** The CA bundle the provider trusts for client certificates. */
  caPem: string | Buffer;
  requiredRoles: readonly Psd2Role[];
  roleUses?: Record<Psd2Role, string>;
  now?: Date;
}

export interface ClientCertificateCheck {
  ok: boolean;
  problems: string[];
  warnings: string[];
  info: CertificateInfo;
}

const EXPIRY_WARNING_DAYS = 30;
const CLIENT_AUTH_EKU = '1.3.6.1.5.5.7.3.2';
const MAX_CHAIN_LENGTH = 8;

/**
 * Checks that a certificate and key can authenticate to the provider: they belong together, the chain
 * reaches the CA bundle, the certificate is valid now and carries the PSD2 roles needed.
 * Throws CertificateError only when the client certificate itself cannot be read.
 */
export function checkClientCertificate(input: ClientCertificateCheckInput): ClientCertificateCheck {
  const now = input.now ?? new Date();
  const [leaf, ...intermediates] = parseCertificates(input.certPem);
  const info = describeCertificate(leaf, now);
  const problems: string[] = [];
  const warnings: string[] = [];

  const key = readPrivateKey(input.keyPem, input.keyPassphrase);
  if (typeof key === 'string') problems.push(key);
  else if (!leaf.checkPrivateKey(key))
    problems.push(
      'the private key does not belong to the client certificate (their public keys differ)',
    );

  problems.push(...chainProblems(leaf, intermediates, input.caPem, now));

  if (now < info.validFrom)
    problems.push(`the client certificate is not valid until ${info.validFrom.toISOString()}`);
  else if (now > info.validTo)
    problems.push(
      `the client certificate expired on ${info.validTo.toISOString()} (${-info.daysToExpiry} day(s) ago)`,
    );
  else if (info.daysToExpiry < EXPIRY_WARNING_DAYS) {
    warnings.push(
      `the client certificate expires in ${info.daysToExpiry} day(s), on ${info.validTo.toISOString()}`,
    );
  }

  // node's keyUsage is the extended key usage list; absent means any use is allowed.
  if (leaf.keyUsage && !leaf.keyUsage.includes(CLIENT_AUTH_EKU)) {
    problems.push(
      'the client certificate is not for TLS client authentication (extendedKeyUsage lacks clientAuth)',
    );
  }

  const missing = input.requiredRoles.filter((role) => !info.roles.includes(role));
  if (missing.length > 0) {
    const uses = input.roleUses ?? PSD2_ROLE_USES;
    const has = info.roles.length > 0 ? `it has ${info.roles.join(', ')}` : 'it has no PSD2 roles';
    problems.push(
      `the client certificate lacks PSD2 role(s) ${missing.join(', ')} needed by: ${missing.map((role) => uses[role]).join(', ')} (${has})`,
    );
  }

  return { ok: problems.length === 0, problems, warnings, info };
}

/** The key, or a message saying why it cannot be used. */
function readPrivateKey(pem: string | Buffer, passphrase: string | undefined): KeyObject | string {
  try {
    return createPrivateKey({ key: pem, format: 'pem', passphrase });
  } catch (error) {
    const encrypted = pem.toString().includes('ENCRYPTED');
    if (encrypted && passphrase === undefined)
      return 'the private key is encrypted and no passphrase was given';
    if (encrypted) return 'the private key could not be decrypted: wrong passphrase?';
    return `the private key could not be read: ${(error as Error).message}`;
  }
}

/** Walks from the leaf through the intermediates in the certificate file to a CA in the bundle. */
function chainProblems(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  caPem: string | Buffer,
  now: Date,
): string[] {
  let anchors: X509Certificate[];
  try {
    anchors = parseCertificates(caPem);
  } catch (error) {
    if (error instanceof CertificateError)
      return [`the CA bundle cannot be read: ${error.message}`];
    throw error;
  }
  const problems: string[] = [];
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN_LENGTH; depth++) {
    const anchor = anchors.find((candidate) => signedBy(current, candidate));
    if (anchor) return [...problems, ...validityProblems('the CA', anchor, now)];
    const next = intermediates.find(
      (candidate) => candidate !== current && signedBy(current, candidate),
    );
    if (!next) {
      const which =
        current === leaf
          ? 'the client certificate'
          : `the intermediate "${oneLineName(current.subject)}"`;
      problems.push(
        `${which} is not signed by any CA in the CA bundle (its issuer is "${oneLineName(current.issuer)}")`,
      );
      return problems;
    }
    if (!next.ca)
      problems.push(`the intermediate "${oneLineName(next.subject)}" is not a CA certificate`);
    problems.push(...validityProblems('the intermediate', next, now));
    current = next;
  }
  problems.push(`the certificate chain is longer than ${MAX_CHAIN_LENGTH}`);
  return problems;
}

function validityProblems(role: string, certificate: X509Certificate, now: Date): string[] {
  const { subject, validFrom, validTo } = describeCertificate(certificate, now);
  if (now >= validFrom && now <= validTo) return [];
  return [
    `${role} "${subject}" is valid only from ${validFrom.toISOString()} to ${validTo.toISOString()}`,
  ];
}

function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
}
