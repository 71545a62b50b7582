import { ProblemException } from '#src/platform/errors/problem.js';

/** The problem a call fails with (its init: status, type, extensions); a success or another error fails the test. */
export function problemOf(promise: Promise<unknown>) {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => {
      if (!(error instanceof ProblemException)) throw error;
      return error.init;
    },
  );
}
