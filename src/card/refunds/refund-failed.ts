import { ProblemException } from '#src/platform/errors/problem.js';
import { facade } from '../common/card-api.js';
import type { CardRow } from '../store/card-store.service.js';

/** The status the provider gives a refund it recorded but did not carry out. */
export const REFUND_FAILED = 'Failed';

/**
 * A refund the provider recorded as Failed (its answer was a 5xx): nothing was refunded, and the
 * problem names the refund so that the app can read it; built from the row alone, so that a repeat
 * with the same Idempotency-Key answers exactly this.
 */
export function refundFailedProblem(row: CardRow<'refund'>): ProblemException {
  const refundId = row.token ?? row.id;
  const resource = `/v1/card/refunds/${refundId}`;
  return new ProblemException({
    status: 502,
    type: 'urn:portico:problem:refund-failed',
    title: 'Refund failed',
    detail: `The provider recorded refund ${refundId} of payment ${row.parentToken ?? ''} as ${REFUND_FAILED}: nothing was refunded. Read it at ${resource}; another attempt needs a new Idempotency-Key.`,
    extensions: {
      outcome: 'failed',
      refundId,
      resource,
      resourceStatus: REFUND_FAILED,
      payment: row.parentToken,
    },
  });
}

/** How a repeat of a refund's creation answers it: the refund, or the problem of a failed one. */
export const refundView = (row: CardRow<'refund'>) =>
  row.status === REFUND_FAILED ? refundFailedProblem(row) : facade('Refund', row.data);
