import { AsyncLocalStorage } from 'node:async_hooks';
import { requestContext } from '#src/platform/logging/request-context.js';
import { formatTraceparent, newSpanId, newTraceId } from '#src/platform/tracing/trace-context.js';
import type { Span } from '#src/platform/tracing/tracer.js';

/** The span of the provider call under way (UpstreamCaller.call), for the transport's headers. */
const callSpans = new AsyncLocalStorage<Span>();

/** Runs a provider call's requests (its retries too) with its span as their parent. */
export function withCallSpan<T>(span: Span, send: () => Promise<T>): Promise<T> {
  return callSpans.run(span, send);
}

/**
 * The W3C headers of a request to the provider: the provider call's span as its parent; outside a call
 * (a readiness probe), the facade request's span, or else a trace of its own.
 */
export function traceHeaders(): { traceparent: string; tracestate?: string } {
  const context = (callSpans.getStore() ?? requestContext.getStore()?.span)?.context;
  if (!context)
    return {
      traceparent: formatTraceparent({
        traceId: newTraceId(),
        spanId: newSpanId(),
        sampled: false,
      }),
    };
  const traceparent = formatTraceparent(context);
  return context.tracestate ? { traceparent, tracestate: context.tracestate } : { traceparent };
}
