/**
 * Work a guard began for a request and that must be finished however the request ends: the guard
 * registers it, and the gateway finishes it exactly once, when the answer is sent (`answered`) or when
 * anything after the guard throws (a pipe, the handler: `failed`, awaited by the exception filter
 * before the problem is answered). Plain hooks on the request, not a Nest interceptor: an interceptor
 * puts every call of its routes through RxJS, which on the hot read path cost more than the rest of
 * the completion.
 */
export interface RequestCompletion {
  /** The handler answered: runs as the answer is sent; may add headers to it (to a success). */
  answered(addHeaders: (headers: Record<string, string>) => void): void;
  /** Something after the guard threw: finishes the work, and gives the error to answer with. */
  failed(error: unknown): Promise<unknown>;
}

const completions = new WeakMap<object, RequestCompletion>();

/** Registers the completion of the work begun for `request` (one per request). */
export function completeRequestWith(request: object, completion: RequestCompletion): void {
  completions.set(request, completion);
}

/** The request's pending completion, taken so that it runs only once. */
export function takeCompletion(request: object): RequestCompletion | undefined {
  const completion = completions.get(request);
  if (completion) completions.delete(request);
  return completion;
}
