import { ProblemException } from '#src/platform/errors/problem.js';
import type { UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import { UPSTREAM_PROBLEM_TYPES } from '#src/platform/errors/upstream-problems.js';
import { notMadeProblem } from '#src/provider-ledger/provider-ledger.service.js';
import { dataOf, type PosRefusal, type PosRow } from '../store/pos-store.service.js';

/**
 * The facade's status for each POS refusal status: the app's own key is fine when the provider says
 * 401 (the terminal, transaction or POS key is not the tenant's: 403), and a terminal that is not
 * connected is a state of the terminal, not a missing route (409).
 */
const FACADE_STATUS: Record<number, number> = { 400: 400, 401: 403, 404: 409, 422: 422 };

/** The provider's refusal as stored with the transaction (status, code, title, fields). */
export function refusalOf(answer: UpstreamAnswer<unknown>): PosRefusal {
  const [first] = answer.messages;
  return {
    status: answer.status,
    code: first?.code ?? String(answer.status),
    title: first?.text?.split(':')[0] ?? null,
    fields: answer.messages.flatMap((m) => (m.path ? [m.path] : [])),
  };
}

/** A stored refusal as problem+json: the provider's code in `upstream.code`. */
export function refusalProblem(refusal: PosRefusal): ProblemException {
  const { status } = refusal;
  return new ProblemException({
    status: FACADE_STATUS[status] ?? (status >= 500 ? 502 : 400),
    type: UPSTREAM_PROBLEM_TYPES.refused,
    title: 'Refused by the provider',
    detail: `${refusal.code}: ${refusal.title ?? ''}${
      refusal.fields?.length ? ` (${refusal.fields.join(', ')})` : ''
    }`,
    extensions: {
      upstream: { status, code: refusal.code, text: refusal.title, fields: refusal.fields },
    },
  });
}

/** A transaction the provider never received (found unknown once Portico's call was over). */
export const notMade = (row: PosRow): ProblemException =>
  notMadeProblem(
    'POS transaction',
    row,
    { transactionId: dataOf(row).request.transaction_id },
    'start it again with a new transactionId and Idempotency-Key',
  );
