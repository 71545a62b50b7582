import { PROBLEM_TYPES, ProblemException } from '../errors/problem.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1 to 255 visible ASCII characters: what fits the column and cannot smuggle spaces or control bytes. */
export const IDEMPOTENCY_KEY_PATTERN_SOURCE = '^[\\x21-\\x7E]+$';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

export const IDEMPOTENCY_PROBLEM_TYPES = {
  inProgress: 'urn:portico:problem:idempotency-in-progress',
  keyReused: 'urn:portico:problem:idempotency-key-reused',
  unavailable: 'urn:portico:problem:idempotency-unavailable',
  outcomeUnknown: 'urn:portico:problem:outcome-unknown',
} as const;

/** The key, undefined when the header is absent; a malformed key is refused rather than ignored. */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && KEY_PATTERN.test(header)) return header;
  throw new ProblemException({
    status: 400,
    type: PROBLEM_TYPES.validation,
    title: 'Validation failed',
    detail: `The ${IDEMPOTENCY_KEY_HEADER} header must be one value of 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters`,
    errors: [
      {
        field: `header:${IDEMPOTENCY_KEY_HEADER}`,
        reason: `${IDEMPOTENCY_KEY_HEADER} must match /${IDEMPOTENCY_KEY_PATTERN_SOURCE}/ and be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
      },
    ],
  });
}

export const inProgressProblem = (): ProblemException =>
  new ProblemException({
    status: 409,
    type: IDEMPOTENCY_PROBLEM_TYPES.inProgress,
    title: 'Request in progress',
    detail: `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry after it finishes to get its answer`,
    headers: { 'Retry-After': '1' },
  });

export const keyReusedProblem = (firstRoute: string, thisRoute: string): ProblemException =>
  new ProblemException({
    status: 422,
    type: IDEMPOTENCY_PROBLEM_TYPES.keyReused,
    title: 'Idempotency key reused',
    detail:
      firstRoute === thisRoute
        ? `This ${IDEMPOTENCY_KEY_HEADER} was already used with another request (a different body or path); use a new key for a new request`
        : `This ${IDEMPOTENCY_KEY_HEADER} was already used with another request (${firstRoute}); use a new key for a new request`,
  });

export const storeUnavailableProblem = (): ProblemException =>
  new ProblemException({
    status: 503,
    type: IDEMPOTENCY_PROBLEM_TYPES.unavailable,
    title: 'Service Unavailable',
    detail: `The ${IDEMPOTENCY_KEY_HEADER} store cannot be reached, so the request was not processed; retry with the same key`,
    headers: { 'Retry-After': '1' },
  });

/** How soon a repeat of a request in doubt is worth making again: the resolver settles it meanwhile. */
export const IN_DOUBT_RETRY_AFTER_SECONDS = 5;

/**
 * A repeat of a request that wrote its resource and whose outcome at the provider is not known yet (its
 * answer was lost, or a crash ended it): it is not run again; once settled, the repeat answers the resource.
 */
export const boundProblem = (
  resource: string,
  extensions: Record<string, unknown> = {},
): ProblemException =>
  new ProblemException({
    status: 409,
    type: IDEMPOTENCY_PROBLEM_TYPES.outcomeUnknown,
    title: 'Outcome unknown',
    detail: `The first request with this ${IDEMPOTENCY_KEY_HEADER} created ${resource}, whose outcome at the provider is not known yet; it is not run again. Portico settles it with the provider: retry after Retry-After seconds to get it as settled, or GET ${resource}.`,
    headers: { 'Retry-After': String(IN_DOUBT_RETRY_AFTER_SECONDS) },
    extensions: { ...extensions, outcome: 'unknown', resource },
  });
