import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { loggedPath } from '../logging/scrub.js';
import { newTraceId, parseTraceparent } from './trace-context.js';
import type { Span, Tracer } from './tracer.js';

/** The span of each facade request, from its onRequest hook to its answer. */
const requestSpans = new WeakMap<object, Span>();

/**
 * Starts the facade request's span: under the caller's `traceparent` (its `tracestate` passed on), or as
 * the first span of a new trace. Named by method and route template (`GET /v1/accounts/:accountId`).
 */
export function startRequestSpan(tracer: Tracer, request: FastifyRequest): Span {
  const parent = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
  const route = request.routeOptions.url;
  const span = tracer.startSpan(
    route ? `${request.method} ${route}` : request.method,
    'server',
    parent,
    tracer.exporting
      ? {
          'http.request.method': request.method,
          'http.route': route,
          'url.path': loggedPath(request.url),
          'portico.request_id': request.id,
        }
      : undefined,
  );
  requestSpans.set(request, span);
  return span;
}

/** Ends the request's span with its answer's status (a 5xx fails it) and the tenant it was for. */
export function endRequestSpan(span: Span, status: number, tenantId: string | undefined): void {
  if (span.recording) {
    span.setAttributes({ 'http.response.status_code': status, 'portico.tenant_id': tenantId });
    if (status >= 500) span.fail(String(status));
  }
  span.end();
}

/**
 * The trace id an answer to this request names (problem+json `traceId`): its span's, or, for a request
 * refused before its span began (by the router, by Node's parser), the caller's trace or a new one.
 */
export function traceIdOf(request: { headers: IncomingHttpHeaders }): string {
  return (
    requestSpans.get(request)?.context.traceId ??
    parseTraceparent(request.headers.traceparent)?.traceId ??
    newTraceId()
  );
}
