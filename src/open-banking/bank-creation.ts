import { ProblemException } from '../platform/errors/problem.js';
import { UPSTREAM_PROBLEM_TYPES } from '../platform/errors/upstream-problems.js';
import type { UpstreamAnswer } from '../upstreams/http/upstream-caller.js';
import type {
  OpenBankingClient,
  OpenBankingSend,
} from '../upstreams/open-banking/open-banking.client.js';

/** A creation the bank answered: what it made, and the answer's headers (ASPSP-SCA-Approach). */
export interface BankCreated<T> {
  data: T;
  headers: Record<string, string>;
}

/**
 * A consent's or payment's creation asked of the bank, for the ledger's create sequence: its answer, or
 * its refusal (4xx) thrown as problem+json; the seam's failures are thrown as they are, for the ledger
 * to tell a call certainly not sent from one in doubt.
 */
export async function createdAtBank<T>(
  bank: OpenBankingClient,
  operation: string,
  brandId: string,
  send: OpenBankingSend<T>,
  call: (send: () => Promise<UpstreamAnswer<T>>) => Promise<UpstreamAnswer<T>> = (sendIt) =>
    sendIt(),
): Promise<BankCreated<T>> {
  const answer = await call(() => bank.call(operation, brandId, send));
  if (answer.status >= 400 || answer.data === undefined) throw bank.refusal(operation, answer);
  return { data: answer.data, headers: answer.headers };
}

/** The history cause of a creation the bank certainly did not make: its refusal's code, or not sent. */
export function refusedCause(error: unknown): string {
  if (!(error instanceof ProblemException) || error.init.type !== UPSTREAM_PROBLEM_TYPES.refused)
    return 'upstream-not-sent';
  const upstream = error.init.extensions?.upstream as { status: number; code?: string };
  return `upstream-refused:${upstream.code ?? upstream.status}`;
}
