/** A form body the sandbox cannot read; `field` is the parameter it stumbled on. */
export class FormBodyError extends Error {
  constructor(readonly field: string) {
    super(`unreadable form field ${field}`);
  }
}

type Node = Record<string, unknown> | unknown[];

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

function decode(text: string, field: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new FormBodyError(field);
  }
}

/**
 * Reads an `application/x-www-form-urlencoded` body with bracket nesting into objects and lists, in
 * the three spellings the provider accepts: raw brackets (`metadata[k]=v`, `a[]=x`), percent-encoded
 * brackets (`metadata%5Bk%5D=v`) and numeric indices (`a[0]=x`, `a%5B0%5D=x`). `isList(field)` says
 * which top-level fields are lists (from the contract), so that `metadata[0]` stays an object key.
 * Values stay text; the contract's schema converts them. A field given twice is refused.
 */
export function decodeFormBody(
  text: string,
  isList: (field: string) => boolean = () => false,
): Record<string, unknown> {
  const root: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const rawKey = at < 0 ? pair : pair.slice(0, at);
    const key = decode(rawKey, rawKey);
    const value = decode(at < 0 ? '' : pair.slice(at + 1), key);
    const match = KEY.exec(key);
    if (!match) throw new FormBodyError(key);
    const name = match[1];
    const segments = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
    if (segments.length === 0) {
      if (name in root) throw new FormBodyError(name);
      root[name] = value;
      continue;
    }
    let container: Node = childOf(root, name, isList(name), name);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      const last = i === segments.length - 1;
      if (Array.isArray(container)) {
        if (segment !== '' && !/^\d{1,4}$/.test(segment)) throw new FormBodyError(name);
        const index = segment === '' ? container.length : Number(segment);
        if (last) {
          if (container[index] !== undefined) throw new FormBodyError(name);
          container[index] = value;
        } else {
          container[index] ??= Object.create(null) as Record<string, unknown>;
          const next: unknown = container[index];
          if (typeof next !== 'object' || next === null) throw new FormBodyError(name);
          container = next as Node;
        }
      } else {
        if (segment === '') throw new FormBodyError(name);
        if (last) {
          if (segment in container) throw new FormBodyError(name);
          container[segment] = value;
        } else container = childOf(container, segment, false, name);
      }
    }
  }
  // Holes left by indices given out of order (a[2] without a[1]) are refused.
  for (const [name, value] of Object.entries(root))
    if (Array.isArray(value) && Object.keys(value).length !== value.length)
      throw new FormBodyError(name);
  return { ...root };
}

function childOf(parent: Record<string, unknown>, key: string, list: boolean, field: string): Node {
  const existing = parent[key];
  if (existing === undefined) {
    const created: Node = list ? [] : (Object.create(null) as Record<string, unknown>);
    parent[key] = created;
    return created;
  }
  if (typeof existing !== 'object' || existing === null) throw new FormBodyError(field);
  return existing as Node;
}
