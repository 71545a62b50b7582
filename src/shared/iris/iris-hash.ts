import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The `hash` of a bank-payment (IRIS) callback or webhook (seeds/README.md):
 * base64(hex(HMAC-SHA256(secret_key, json)) + "|" + json).
 */
export function signIrisJson(secretKey: string, json: string): string {
  const signature = createHmac('sha256', secretKey).update(json, 'utf8').digest('hex');
  return Buffer.from(`${signature}|${json}`, 'utf8').toString('base64');
}

/**
 * The JSON a `hash` carries when its signature is the merchant's (compared in constant time), else
 * undefined: a hash that is not base64 of `<64 hex>|<json object>`, or is signed with another key.
 */
export function verifyIrisHash(
  secretKey: string,
  hash: string,
): Record<string, unknown> | undefined {
  if (typeof hash !== 'string' || hash.length > 16_384 || !/^[A-Za-z0-9+/=]+$/.test(hash))
    return undefined;
  const text = Buffer.from(hash, 'base64').toString('utf8');
  const bar = text.indexOf('|');
  // Not 64 hex digits (a multi-byte character among them would make the comparison throw).
  if (bar !== 64 || !/^[0-9a-f]{64}$/i.test(text.slice(0, 64))) return undefined;
  const given = Buffer.from(text.slice(0, 64), 'utf8');
  const json = text.slice(65);
  const expected = Buffer.from(
    createHmac('sha256', secretKey).update(json, 'utf8').digest('hex'),
    'utf8',
  );
  if (!timingSafeEqual(given, expected)) return undefined;
  try {
    const parsed = JSON.parse(json) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
