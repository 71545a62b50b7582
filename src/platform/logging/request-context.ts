import { AsyncLocalStorage } from 'node:async_hooks';
import type { IdempotencyClaim } from '../idempotency/idempotency-binding.js';
import type { Span } from '../tracing/tracer.js';

export interface RequestContext {
  requestId: string;
  tenantId?: string;
  /** The facade request's span: its trace id is on every log line, the spans of its work go under it. */
  span?: Span;
  /** When this request's time with the upstream ends (epoch ms), set by its first upstream call. */
  upstreamDeadline?: number;
  /** The request's Idempotency-Key claim, to bind it to the resource the request writes. */
  idempotency?: IdempotencyClaim;
  /**
   * The request's rate-limit count while it is in flight (a creating call without an Idempotency-Key:
   * see ApiKeyGuard), which its first write awaits (admittedToWrite): rejects with 429 over the limit.
   */
  admission?: Promise<void>;
}

/** Carries the request id, its trace id and, once authenticated, the tenant into every log line of a request. */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/**
 * Settles when the current request may write: at once, unless its rate-limit count is still in flight
 * (RequestContext.admission); rejects with its 429 when the key is over its limit. Every write of a
 * provider call (the ledger's begin, a call written ahead) awaits it first.
 */
export function admittedToWrite(): Promise<void> | undefined {
  return requestContext.getStore()?.admission;
}
