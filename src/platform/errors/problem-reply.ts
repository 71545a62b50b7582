import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { traceIdOf } from '../tracing/request-span.js';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES } from './problem.js';
import { problemTitle } from './problem-titles.js';
import { toProblem } from './to-problem.js';

/** Writes the problem+json answer for any error; the single place errors become responses. */
export function sendProblem(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  logger: Logger,
): void {
  const problem = toProblem(error);
  const instance = request.url.split('?')[0].slice(0, 2000);
  const body: Record<string, unknown> = problem
    ? {
        type: problem.type ?? 'about:blank',
        title: problemTitle(problem.type ?? 'about:blank', problem.status, problem.title),
        status: problem.status,
        ...(problem.detail !== undefined ? { detail: problem.detail } : {}),
        instance,
        requestId: request.id,
        traceId: traceIdOf(request),
        ...(problem.errors ? { errors: problem.errors } : {}),
        ...problem.extensions,
      }
    : {
        type: PROBLEM_TYPES.internal,
        title: 'Internal Server Error',
        status: 500,
        instance,
        requestId: request.id,
        traceId: traceIdOf(request),
      };
  if (!problem) logger.error({ err: error }, 'unhandled error');
  else if (problem.status >= 500)
    logger.warn({ status: problem.status, detail: problem.detail }, 'request failed');
  if (reply.sent) return;
  // Set here too for the answers given before the onRequest hook ran (the router's own refusals).
  reply.header('x-request-id', request.id);
  if (problem?.headers) reply.headers(problem.headers);
  reply
    .status(body.status as number)
    .type(PROBLEM_CONTENT_TYPE)
    .send(body);
}
