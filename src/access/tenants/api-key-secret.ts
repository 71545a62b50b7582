import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PATTERN = /^ptk_([A-Za-z0-9]{8})_([A-Za-z0-9_-]{43})$/;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface GeneratedKey {
  key: string;
  prefix: string;
  secretHash: string;
}

/** SHA-256, hex: `crypto.hash` is the one-shot form (no Hash object per request). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** `ptk_<8-char prefix>_<256 random bits, base64url>`; the prefix finds the row, the hash proves the key. */
export function generateKey(): GeneratedKey {
  const prefix = Array.from(
    randomBytes(8),
    (byte) => PREFIX_ALPHABET[byte % PREFIX_ALPHABET.length],
  ).join('');
  const key = `ptk_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, secretHash: hashKey(key) };
}

export function parseKey(key: string): { prefix: string } | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? { prefix: match[1] } : undefined;
}

export function keyMatches(key: string, secretHash: string): boolean {
  const expected = Buffer.from(secretHash, 'hex');
  const actual = Buffer.from(hashKey(key), 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
