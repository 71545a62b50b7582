import { requestContext } from '#src/platform/logging/request-context.js';
import { formatTraceparent, newSpanId, newTraceId } from '#src/platform/tracing/trace-context.js';
import type { Span } from '#src/platform/tracing/tracer.js';

/**
 * The W3C headers of a request to the provider: the provider call's span as its parent (UpstreamCaller
 * hands it over on the call's DeadlineSignal); outside a call (a readiness probe), the facade request's
 * span, or else a trace of its own.
 */
export function traceHeaders(callSpan?: Span): { traceparent: string; tracestate?: string } {
  const context = (callSpan ?? requestContext.getStore()?.span)?.context;
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
