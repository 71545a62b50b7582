import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';
import { CertificateError } from '#src/shared/qwac/qwac-reader.js';

/**
 * node-forge, loaded on the first PKCS#12 file: a gateway configured with PEM files never needs it, and
 * it holds about 1.7 MiB of heap once loaded.
 */
let loadedForge: typeof Forge | undefined;
function forgeModule(): typeof Forge {
  loadedForge ??= createRequire(import.meta.url)('node-forge') as typeof Forge;
  return loadedForge;
}

/** forge's messages when the MAC or a decryption fails: the passphrase is wrong. */
const WRONG_PASSPHRASE = /MAC could not be verified|wrong password|failed to decrypt/i;

/**
 * A PKCS#12 file (.p12/.pfx) as PEM: the client certificate first, then its chain, and the private key.
 * Read in-process with node-forge, which handles both current files (PBES2 with AES, SHA-256 MAC)
 * and legacy ones (3DES, RC2-40, SHA-1 MAC).
 */
export function readPkcs12(file: string, passphrase = ''): { cert: Buffer; key: Buffer } {
  let der: Buffer;
  try {
    der = readFileSync(file);
  } catch (error) {
    throw new CertificateError(
      `cannot read the PKCS#12 file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const forge = forgeModule();
  let pfx: Forge.pkcs12.Pkcs12Pfx;
  try {
    pfx = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der.toString('binary')), true, passphrase);
  } catch (error) {
    const message = (error as Error).message;
    const reason = WRONG_PASSPHRASE.test(message)
      ? 'wrong passphrase'
      : `not a readable PKCS#12 file (${message})`;
    throw new CertificateError(`cannot read the PKCS#12 file ${file}: ${reason}`);
  }

  const keys = bagsOf(pfx, forge.pki.oids.pkcs8ShroudedKeyBag, forge.pki.oids.keyBag).map(keyOf);
  const certificates = bagsOf(pfx, forge.pki.oids.certBag).map(certificateOf);
  if (keys.length === 0 || certificates.length === 0)
    throw new CertificateError(
      `the PKCS#12 file ${file} must hold a certificate and its private key`,
    );
  const [key] = keys;
  // The leaf is the certificate of the private key; the others are its chain.
  const ordered = [...certificates].sort(
    (a, b) => Number(b.checkPrivateKey(key)) - Number(a.checkPrivateKey(key)),
  );
  return {
    cert: Buffer.from(ordered.map((certificate) => certificate.toString()).join('')),
    key: Buffer.from(key.export({ type: 'pkcs8', format: 'pem' })),
  };
}

function bagsOf(pfx: Forge.pkcs12.Pkcs12Pfx, ...types: string[]): Forge.pkcs12.Bag[] {
  return types.flatMap((bagType) => pfx.getBags({ bagType })[bagType] ?? []);
}

/** forge decodes only RSA keys itself; any other kind is left as its PrivateKeyInfo. */
function keyOf(bag: Forge.pkcs12.Bag): KeyObject {
  const forge = forgeModule();
  const info = bag.key
    ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key))
    : (bag.asn1 as Forge.asn1.Asn1);
  return createPrivateKey({ key: derOf(info), format: 'der', type: 'pkcs8' });
}

/** Likewise forge decodes only RSA certificates; the others come as their ASN.1. */
function certificateOf(bag: Forge.pkcs12.Bag): X509Certificate {
  const forge = forgeModule();
  const asn1 = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : (bag.asn1 as Forge.asn1.Asn1);
  return new X509Certificate(derOf(asn1));
}

function derOf(asn1: Forge.asn1.Asn1): Buffer {
  return Buffer.from(forgeModule().asn1.toDer(asn1).getBytes(), 'binary');
}
