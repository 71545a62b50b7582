import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config.js';

/** The development key of sandbox mode, made once beside the development certificates. */
const DEV_KEY_FILE = 'secrets.key';
/** Its earlier name: a development installation that has it keeps its key (and what it sealed). */
const EARLIER_DEV_KEY_FILE = 'card-credentials.key';

/** Reads a 32-byte key written as 64 hex digits or base64. */
export function parseSecretsKey(text: string, variable = 'SECRETS_KEY'): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed, 'base64');
  if (key.length !== 32)
    throw new Error(`${variable}: must be 32 bytes, as 64 hex digits or base64`);
  return key;
}

/** The key id a sealed value names (`v1:<key id>:…`), or undefined for a value that is not sealed. */
export function sealedKeyId(sealed: string): string | undefined {
  const [version, keyId] = sealed.split(':', 3);
  return version === 'v1' && keyId ? keyId : undefined;
}

/**
 * AES-256-GCM for the secrets Portico keeps (each tenant's merchant keys, webhook signing secrets): each
 * value sealed with a fresh 96-bit nonce and bound (additional data) to its owner and field, so that a
 * ciphertext copied to another row or field does not open. Stored as `v1:<key id>:<nonce>:<tag>:<ciphertext>` (base64url), the key id being the
 * first 8 hex digits of the key's SHA-256 (so that a wrong key is named, not mistaken for tampering).
 */
export class SecretsCipher {
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  seal(plain: string, context: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [nonce, cipher.getAuthTag(), body].map((part) => part.toString('base64url'));
    return ['v1', this.keyId, ...parts].join(':');
  }

  open(sealed: string, context: string): string {
    const [version, keyId, nonce, tag, body] = sealed.split(':');
    if (version !== 'v1' || !body) throw new Error('not a sealed secret');
    if (keyId !== this.keyId)
      throw new Error(
        `sealed with another SECRETS_KEY (key id ${keyId}, configured ${this.keyId})`,
      );
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}

/**
 * The key ring of a rotation: the current key seals, and every key of the ring opens what it sealed,
 * picked by the key id the sealed value names.
 */
export class SecretsKeyRing {
  private readonly byId = new Map<string, SecretsCipher>();

  constructor(
    readonly current: SecretsCipher,
    others: SecretsCipher[] = [],
  ) {
    for (const cipher of [current, ...others]) this.byId.set(cipher.keyId, cipher);
  }

  /** Every key id that opens, the current one first. */
  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  seal(plain: string, context: string): string {
    return this.current.seal(plain, context);
  }

  open(sealed: string, context: string): string {
    const keyId = sealedKeyId(sealed);
    if (keyId === undefined) throw new Error('not a sealed secret');
    const cipher = this.byId.get(keyId);
    if (!cipher)
      throw new Error(
        `sealed with another SECRETS_KEY (key id ${keyId}, configured ${this.keyIds.join(', ')})`,
      );
    return cipher.open(sealed, context);
  }
}

/**
 * The key ring of Portico's secrets: SECRETS_KEY seals, it and SECRETS_KEYS open; without SECRETS_KEY,
 * in sandbox mode a development key kept in SANDBOX_CERTS_DIR (made on first use); none in production.
 */
export function loadSecretsKeyRing(config: AppConfig): SecretsKeyRing | undefined {
  const current = loadSecretsCipher(config);
  if (!current) return undefined;
  const others = config.secrets.previousKeys.map(
    (key) => new SecretsCipher(parseSecretsKey(key, 'SECRETS_KEYS')),
  );
  return new SecretsKeyRing(current, others);
}

/**
 * The cipher that seals Portico's secrets: SECRETS_KEY, or in sandbox mode a development key kept in
 * SANDBOX_CERTS_DIR (made on first use); none in production without the setting.
 */
export function loadSecretsCipher(config: AppConfig): SecretsCipher | undefined {
  if (config.secrets.key) return new SecretsCipher(parseSecretsKey(config.secrets.key));
  if (config.mode !== 'sandbox') return undefined;
  const file = join(config.sandbox.certsDir, DEV_KEY_FILE);
  const earlier = join(config.sandbox.certsDir, EARLIER_DEV_KEY_FILE);
  if (!existsSync(file) && existsSync(earlier))
    try {
      renameSync(earlier, file);
    } catch (error) {
      // Another process renamed it first.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  if (!existsSync(file)) {
    mkdirSync(config.sandbox.certsDir, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process made it first: use that one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return new SecretsCipher(parseSecretsKey(readFileSync(file, 'utf8')));
}
