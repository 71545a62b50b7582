import { randomFillSync } from 'node:crypto';

/** Where a span sits in its trace (W3C Trace Context): what a `traceparent` header carries. */
export interface SpanContext {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** 16 lower-case hex digits, not all zero. */
  spanId: string;
  /** The `sampled` flag: the caller may record this trace (and asks its callees to). */
  sampled: boolean;
  /** The caller's `tracestate`, passed on unchanged. */
  tracestate?: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** A tracestate list member: a key (simple or tenant@system) and a value of printable ASCII. */
const TRACESTATE_MEMBER =
  /^\s*(?:[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]\s*$/;
const TRACESTATE_MAX_LENGTH = 512;
const TRACESTATE_MAX_MEMBERS = 32;

/**
 * The caller's `traceparent`, when it is one a W3C Trace Context participant accepts: version 00 exactly
 * 55 characters, a later version at least those fields; version ff, an all-zero id, upper case or two
 * headers make it invalid (the request then starts a trace of its own).
 */
export function parseTraceparent(
  header: string | string[] | undefined,
  tracestate?: string | string[],
): SpanContext | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags] = match;
  if (version === 'ff' || (version === '00' && value.length !== 55)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const state = parseTracestate(tracestate);
  return {
    traceId,
    spanId,
    sampled: (parseInt(flags, 16) & 1) === 1,
    ...(state ? { tracestate: state } : {}),
  };
}

/** The caller's `tracestate` (its headers joined), when well-formed; else none, as the spec asks. */
export function parseTracestate(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value || value.length > TRACESTATE_MAX_LENGTH) return undefined;
  const members = value.split(',').filter((member) => member.trim() !== '');
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  if (!members.every((member) => TRACESTATE_MEMBER.test(member))) return undefined;
  return members.map((member) => member.trim()).join(',');
}

/** The `traceparent` header naming this span as the parent of the callee's. */
export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

/** Random bytes drawn in blocks: one `randomFillSync` per 512 span ids instead of one per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomHex(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > pool.length) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const start = poolOffset;
    poolOffset += bytes;
    // An all-zero id is invalid; 2^-64 at worst, but then draw again.
    for (let index = start; index < poolOffset; index++)
      if (pool[index] !== 0) return pool.toString('hex', start, poolOffset);
  }
}

/** A new trace id: 16 random bytes as 32 hex digits (W3C: random, never all zero). */
export const newTraceId = (): string => randomHex(16);

/** A new span id: 8 random bytes as 16 hex digits. */
export const newSpanId = (): string => randomHex(8);
