import { requestContext } from '../logging/request-context.js';

/**
 * Binds the current request's Idempotency-Key (if it has one) to the resource it has just written,
 * before the provider is called: from then on the key never runs the operation again, whatever
 * happens to this request (timeout, crash); repeats get its answer or are told where to look.
 */
export async function bindIdempotentResource(resource: string): Promise<void> {
  await requestContext.getStore()?.idempotency?.bind(resource);
}
