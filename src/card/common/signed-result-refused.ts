import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';

/** The 401 of a signed provider result (IRIS, web wallet) that Portico does not accept. */
export const signedResultRefused = (detail: string) =>
  new ProblemException({
    status: 401,
    type: PROBLEM_TYPES.unauthenticated,
    title: 'Unauthorized',
    detail,
  });
