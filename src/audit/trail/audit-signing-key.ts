import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '#src/platform/config/app-config.js';

export interface AuditSigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The first 16 hex digits of sha256 of the public key (SPKI DER). */
  keyId: string;
  publicKeyPem: string;
}

/** A key checkpoints are verified with: the signing key's public half, or a retired key's. */
export type AuditPublicKey = Omit<AuditSigningKey, 'privateKey'>;

function publicKeyOf(publicKey: KeyObject): AuditPublicKey {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    publicKey,
    keyId: createHash('sha256').update(der).digest('hex').slice(0, 16),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export function signingKeyOf(privateKeyPem: string): AuditSigningKey {
  const privateKey = createPrivateKey(privateKeyPem);
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new Error('AUDIT_SIGNING_KEY: must be an Ed25519 private key (PKCS#8 PEM)');
  return { privateKey, ...publicKeyOf(createPublicKey(privateKey)) };
}

/** The Ed25519 public keys (SPKI PEM) of a bundle, each with its key id. */
export function publicKeysOf(bundle: string, source = 'AUDIT_TRUSTED_KEYS_FILE'): AuditPublicKey[] {
  const blocks = bundle.match(/-----BEGIN PUBLIC KEY-----[^-]+-----END PUBLIC KEY-----/g) ?? [];
  if (blocks.length === 0)
    throw new Error(`${source}: holds no public key (-----BEGIN PUBLIC KEY-----)`);
  return blocks.map((pem, index) => {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(`${source}: key ${index + 1} is not an Ed25519 public key`);
    return publicKeyOf(key);
  });
}

/**
 * The keys whose checkpoints verify, by key id: the signing key (if any) and the public keys of
 * AUDIT_TRUSTED_KEYS_FILE (retired signing keys, whose checkpoints stay in the chain).
 */
export function loadTrustedAuditKeys(
  config: AppConfig,
  signing: AuditSigningKey | undefined,
): Map<string, AuditPublicKey> {
  const file = config.audit.trustedKeysFile;
  const retired = file ? publicKeysOf(readFileSync(file, 'utf8')) : [];
  const keys = signing ? [signing, ...retired] : retired;
  return new Map(
    keys.map(({ keyId, publicKey, publicKeyPem }) => [keyId, { keyId, publicKey, publicKeyPem }]),
  );
}

/** The development key of sandbox mode, made once beside the development certificates. */
const DEV_KEY_FILE = 'audit-signing-key.pem';

/**
 * The key that signs checkpoints: AUDIT_SIGNING_KEY, or in sandbox mode a development key kept in
 * SANDBOX_CERTS_DIR (made on first use); none in production without the setting (no checkpoints).
 */
export function loadAuditSigningKey(config: AppConfig): AuditSigningKey | undefined {
  if (config.audit.signingKeyPem) return signingKeyOf(config.audit.signingKeyPem);
  if (config.mode !== 'sandbox') return undefined;
  const file = join(config.sandbox.certsDir, DEV_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(config.sandbox.certsDir, { recursive: true });
    const { privateKey } = generateKeyPairSync('ed25519');
    try {
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
        mode: 0o600,
        flag: 'wx',
      });
    } catch (error) {
      // Another process made it first: use that one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return signingKeyOf(readFileSync(file, 'utf8'));
}
