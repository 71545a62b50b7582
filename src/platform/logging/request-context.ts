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
}

/** Carries the request id, its trace id and, once authenticated, the tenant into every log line of a request. */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
