import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

/** Where the sandbox writes its request lines: a pino logger (the gateway's, or its own). */
export interface SandboxLog {
  info(fields: Record<string, unknown>, message: string): void;
}

/** The most of a received header a line repeats (a header can be as long as the request head). */
const HEADER_SHOWN = 256;

const shown = (value: string | string[] | undefined) =>
  value === undefined ? undefined : String(value).slice(0, HEADER_SHOWN);

/**
 * One line per answered request of a provider listener (`sandbox request`): what the provider saw of the
 * caller's X-Request-ID and W3C trace (`traceparent`, `tracestate`), as a provider's access log would.
 */
export function logRequests(server: FastifyInstance, listener: string, log?: SandboxLog): void {
  if (!log) return;
  server.addHook('onResponse', (request, reply, done) => {
    log.info(
      {
        listener,
        method: request.method,
        path: request.url.split('?')[0].slice(0, 2000),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime),
        requestId: shown(request.headers['x-request-id']),
        traceparent: shown(request.headers.traceparent),
        tracestate: shown(request.headers.tracestate),
      },
      'sandbox request',
    );
    done();
  });
}

/** The standalone sandbox's log (`npm run sandbox`): JSON lines on stdout, written in blocks. */
export function standaloneSandboxLog(): SandboxLog {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => stream.flush(), 100).unref();
  return pino(
    { base: { service: 'portico-sandbox' }, timestamp: pino.stdTimeFunctions.isoTime },
    stream,
  );
}
