const BANK_ACCOUNT_PATH = /^\/[^/]+\/bg\/v1\/accounts(\/[^?#]*)?(\?[^#]*)?$/;

/**
 * The bank's `_links` point at its own paths (`/{brandId}/bg/v1/accounts/…`), which mean nothing to
 * an app: account links are rewritten to the facade's `/v1/accounts/…`; any other bank link is dropped.
 */
export function facadeLinks<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => facadeLinks(item) as unknown) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === '_links' ? rewriteLinks(child) : facadeLinks(child);
  }
  return out as T;
}

function rewriteLinks(links: unknown): Record<string, { href: string }> {
  const out: Record<string, { href: string }> = {};
  for (const [name, link] of Object.entries((links ?? {}) as Record<string, { href?: unknown }>)) {
    const match = typeof link?.href === 'string' ? BANK_ACCOUNT_PATH.exec(link.href) : null;
    if (match) out[name] = { href: `/v1/accounts${match[1] ?? ''}${match[2] ?? ''}` };
  }
  return out;
}
