import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.service.js';

/** Label of requests that matched no route: raw URLs would put ids (and junk) into label values. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Counts each answered request under its route template (`/v1/accounts/:accountId`), never its URL. */
export function recordHttpMetrics(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.recordHttpRequest(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}
