import { requestContext } from '../logging/request-context.js';
import { IdempotencyRecordsRepository } from './idempotency-records.repository.js';

/** A request's claimed Idempotency-Key, as the idempotency interceptor leaves it in the request context. */
export interface IdempotencyClaim {
  readonly tenantId: string;
  readonly key: string;
  /** The claim's lease (see IdempotencyStore): a bind touches only this attempt's record. */
  readonly lease: string;
  /** The resource the key is bound to, once a committed statement bound it. */
  boundTo?: string;
  /** Binds the key to `resource` in a statement of its own; nothing when it is bound to it already. */
  bind(resource: string): Promise<void>;
}

/**
 * Binds the current request's Idempotency-Key (if it has one) to the resource it has just written,
 * before the provider is called: from then on the key never runs the operation again, whatever
 * happens to this request (timeout, crash); repeats get its answer or are told where to look.
 */
export async function bindIdempotentResource(resource: string): Promise<void> {
  await requestContext.getStore()?.idempotency?.bind(resource);
}

/**
 * The same bind as a CTE `name` of the statement that writes the resource (the ledger's begin), its
 * parameters numbered from `$first`: the key is bound in that statement's commit, with the resource,
 * and the request saves a round-trip and a commit. `written()` records it once the statement has
 * committed. Undefined when the request has no key, or its key is bound already.
 */
export function idempotentBindCte(
  name: string,
  resource: string,
  first: number,
): { cte: string; params: unknown[]; written(): void } | undefined {
  const claim = requestContext.getStore()?.idempotency;
  if (!claim || claim.boundTo !== undefined) return undefined;
  return {
    cte: IdempotencyRecordsRepository.bindCte(name, first),
    params: [claim.tenantId, claim.key, claim.lease, resource],
    written: () => {
      claim.boundTo = resource;
    },
  };
}
