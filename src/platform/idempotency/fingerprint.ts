import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so that `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same
 * request. Arrays keep their order (it is meaningful); `undefined` members are dropped as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== 'object' || Array.isArray(member)) return member;
    const plain = member as Record<string, unknown>;
    // Dates, Buffers and other objects with toJSON have already been converted by JSON.stringify here.
    return Object.fromEntries(
      Object.keys(plain)
        .sort()
        .map((key) => [key, plain[key]]),
    );
  });
}

export interface RequestIdentity {
  method: string;
  /** The route's path template (`/v1/payments/:paymentId`), not the concrete path. */
  route: string;
  params: unknown;
  body: unknown;
}

/** SHA-256 (hex) of the canonical JSON of the request: what "the same request" means for a key. */
export function requestFingerprint(request: RequestIdentity): string {
  const { method, route, params, body } = request;
  return createHash('sha256')
    .update(canonicalJson({ method, route, params: params ?? {}, body: body ?? null }))
    .digest('hex');
}
