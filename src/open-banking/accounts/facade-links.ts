import { toRfc3339Utc } from '#src/platform/common/rfc3339.js';

const BANK_ACCOUNT_PATH = /^\/[^/]+\/bg\/v1\/accounts(\/[^?#]*)?(\?[^#]*)?$/;

/**
 * The bank's `_links` point at its own paths (`/{brandId}/bg/v1/accounts/…`), which mean nothing to
 * an app: account links are rewritten to the facade's `/v1/accounts/…`; any other bank link is dropped.
 * A bank's date-time (`lastChangeDateTime`, any offset) is given as the facade gives every timestamp:
 * RFC 3339 in UTC. In place: the value is the bank's answer as parsed for this call, which nothing else
 * holds.
 */
export function facadeLinks<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (const item of value) facadeLinks(item);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (key === '_links') record[key] = rewriteLinks(record[key]);
    else if (key.endsWith('DateTime') && typeof record[key] === 'string')
      record[key] = toRfc3339Utc(record[key]);
    else facadeLinks(record[key]);
  }
  return value;
}

function rewriteLinks(links: unknown): Record<string, { href: string }> {
  const out: Record<string, { href: string }> = {};
  for (const [name, link] of Object.entries((links ?? {}) as Record<string, { href?: unknown }>)) {
    const match = typeof link?.href === 'string' ? BANK_ACCOUNT_PATH.exec(link.href) : null;
    if (match) out[name] = { href: `/v1/accounts${match[1] ?? ''}${match[2] ?? ''}` };
  }
  return out;
}
