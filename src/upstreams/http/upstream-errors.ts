/** Why a call to the provider produced no usable answer. */
export type UpstreamFailureKind =
  'timeout' | 'refused' | 'tls' | 'connection' | 'bad-response' | 'circuit-open';

export class UpstreamError extends Error {
  constructor(
    readonly upstream: string,
    readonly kind: UpstreamFailureKind,
    message: string,
    cause?: unknown,
    /** True when the request certainly never reached the provider (refused, TLS, connect timeout). */
    readonly notSent = kind === 'refused' || kind === 'tls' || kind === 'circuit-open',
  ) {
    super(`${upstream}: ${message}`, { cause });
    this.name = 'UpstreamError';
  }
}

const TLS_CODES =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_OSSL_|HOSTNAME_MISMATCH)/;
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ABORT_ERR',
]);
const REFUSED_CODES = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const { code, cause, name, errors } = current as {
      code?: unknown;
      cause?: unknown;
      name?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string') codes.push(code);
    // Happy eyeballs (localhost as ::1 and 127.0.0.1) fails with an AggregateError of each attempt.
    if (Array.isArray(errors))
      for (const inner of errors as { code?: unknown }[])
        if (typeof inner?.code === 'string') codes.push(inner.code);
    if (name === 'TimeoutError' || name === 'AbortError') codes.push('ABORT_ERR');
    current = cause;
  }
  return codes;
}

/** Turns an undici or TLS failure into a typed UpstreamError. */
export function toUpstreamError(upstream: string, error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const codes = codesOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const detail = codes.length ? `${codes.join(' <- ')}: ${message}` : message;
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT'))
    return new UpstreamError(upstream, 'timeout', `connect timed out (${detail})`, error, true);
  if (codes.some((code) => TIMEOUT_CODES.has(code)))
    return new UpstreamError(upstream, 'timeout', `timed out (${detail})`, error);
  if (codes.some((code) => REFUSED_CODES.has(code)))
    return new UpstreamError(upstream, 'refused', `connection refused (${detail})`, error);
  if (
    codes.some((code) => TLS_CODES.test(code)) ||
    /certificate|alert|handshake|ssl|tls/i.test(message)
  ) {
    return new UpstreamError(upstream, 'tls', `TLS failure (${detail})`, error);
  }
  return new UpstreamError(upstream, 'connection', `connection failed (${detail})`, error);
}
