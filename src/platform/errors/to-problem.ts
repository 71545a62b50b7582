import { HttpException } from '@nestjs/common';
import { isDatabaseUnavailable } from '../database/database-unavailable.js';
import {
  PROBLEM_TYPES,
  ProblemException,
  statusTitle,
  type InvalidField,
  type ProblemInit,
} from './problem.js';

/** Exception thrown by the validation pipe; carries the offending fields. */
export class ValidationFailedException extends ProblemException {
  constructor(errors: InvalidField[], where = 'request body') {
    super({
      status: 400,
      type: PROBLEM_TYPES.validation,
      title: 'Validation failed',
      detail: `The ${where} has ${errors.length} invalid field${errors.length === 1 ? '' : 's'}: ${errors.map((e) => e.field).join(', ')}`,
      errors,
    });
  }
}

const TYPE_BY_STATUS: Record<number, string> = {
  401: PROBLEM_TYPES.unauthenticated,
  403: PROBLEM_TYPES.forbidden,
  404: PROBLEM_TYPES.notFound,
  409: PROBLEM_TYPES.conflict,
  429: PROBLEM_TYPES.rateLimited,
  413: PROBLEM_TYPES.bodyTooLarge,
  414: PROBLEM_TYPES.uriTooLong,
  415: PROBLEM_TYPES.unsupportedMediaType,
};

/** Fastify's own wording echoes the whole path; these say what is wrong instead. */
const FASTIFY_DETAIL: Record<string, string> = {
  FST_ERR_BAD_URL: 'The request path is not a valid URL (malformed percent-encoding?)',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is longer than 100 characters',
  FST_ERR_CTP_INVALID_MEDIA_TYPE:
    'This content type is not taken: send the body as application/json (or send none)',
};

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * Turns anything thrown into a problem. Returns undefined for unknown errors:
 * those are internal and answered as a bare 500 by the caller.
 */
export function toProblem(error: unknown): ProblemInit | undefined {
  if (error instanceof ProblemException) return error.init;
  if (isDatabaseUnavailable(error))
    return {
      status: 503,
      type: PROBLEM_TYPES.unavailable,
      title: 'Service Unavailable',
      detail: 'The database cannot serve this request right now; send it again shortly',
      headers: { 'retry-after': '1' },
    };
  // Nest maps Fastify's own errors (body parsing, size, media type) to HttpException with the original as cause.
  const fastifyError = (error instanceof HttpException ? error.cause : error) as
    FastifyLikeError | undefined;
  if (
    typeof fastifyError?.code === 'string' &&
    fastifyError.code.startsWith('FST_') &&
    typeof fastifyError.statusCode === 'number' &&
    fastifyError.statusCode < 500
  ) {
    const status = fastifyError.statusCode;
    const malformed = fastifyError.code.startsWith('FST_ERR_CTP_') && status === 400;
    return {
      status,
      type: malformed
        ? PROBLEM_TYPES.malformedBody
        : (TYPE_BY_STATUS[status] ??
          (status === 400 ? PROBLEM_TYPES.malformedRequest : 'about:blank')),
      title: malformed ? 'Malformed request body' : statusTitle(status),
      detail: FASTIFY_DETAIL[fastifyError.code] ?? fastifyError.message,
    };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const response = error.getResponse();
    const message =
      typeof response === 'string' ? response : (response as { message?: unknown }).message;
    return {
      status,
      type: TYPE_BY_STATUS[status] ?? 'about:blank',
      title: statusTitle(status),
      detail: Array.isArray(message)
        ? message.join('; ')
        : typeof message === 'string'
          ? message
          : undefined,
    };
  }
  return undefined;
}
