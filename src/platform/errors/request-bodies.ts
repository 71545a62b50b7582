import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PROBLEM_TYPES, ProblemException } from './problem.js';

const FORM = 'application/x-www-form-urlencoded';
/** Types Fastify would parse (a form, plain text) that no JSON route takes. */
const NOT_JSON = new Set([FORM, 'text/plain']);

/** Fastify route config of a route that takes a form body (a provider's browser POST), not JSON. */
export const FORM_BODY_ROUTE = { formBody: true } as const;

const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

type Done = (error: Error | null, body?: unknown) => void;

/**
 * The JSON body parser: Fastify's own (prototype poisoning refused), but an empty body is no body, so
 * that a client sending `Content-Type: application/json` on a call without a body (a capture, a form's
 * opening) is answered as if it had sent none. A route whose body is required then refuses it as such.
 */
export function jsonBodyParser(
  fastify: FastifyInstance,
): (request: FastifyRequest, body: Buffer, done: Done) => void {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    if (body.length === 0 || body.toString('utf8').trim() === '') return done(null, undefined);
    void parse(request, body.toString('utf8'), done);
  };
}

/**
 * Fastify preValidation hook: a form-encoded body is taken only by the routes that declare it
 * (FORM_BODY_ROUTE), plain text by none; elsewhere they are answered 415, naming the JSON the route
 * takes, rather than parsed into strings that fail as "must be integer".
 */
export function refuseFormOnJsonRoutes(
  request: FastifyRequest,
  _reply: unknown,
  done: (error?: Error) => void,
): void {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  const config = request.routeOptions.config as { formBody?: boolean } | undefined;
  if (!NOT_JSON.has(type) || BODILESS.has(request.method)) return done();
  if (type === FORM && config?.formBody === true) return done();
  done(
    new ProblemException({
      status: 415,
      type: PROBLEM_TYPES.unsupportedMediaType,
      title: 'Unsupported Media Type',
      detail: `This operation takes a JSON body: send it as application/json, not ${type}`,
    }),
  );
}
