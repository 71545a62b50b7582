import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiProblems } from '../errors/api-problem-responses.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN_SOURCE,
  IDEMPOTENT_REPLAYED_HEADER,
} from './idempotency-problems.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { READ_BACK_KEY } from './read-back.js';

/**
 * Set by @Idempotent() on a creating call: without an Idempotency-Key, its rate-limit count may still
 * be in flight while the request is read and checked, and is awaited by its first write (ApiKeyGuard).
 */
export const COUNTED_BY_FIRST_WRITE_KEY = 'portico:counted-by-first-write';

/**
 * Makes a POST safely retryable with an optional `Idempotency-Key` header, and documents it: interceptor and
 * spec cannot diverge. Put it after @Auth() on the route (keys are scoped by the caller's tenant); the module
 * declaring the controller imports IdempotencyModule.
 */
export function Idempotent(options: { readBack?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    SetMetadata(COUNTED_BY_FIRST_WRITE_KEY, true),
    SetMetadata(READ_BACK_KEY, options.readBack === true),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        `Makes this request safe to retry: a unique value per operation (a UUID). For 24 hours, a repeat with the same key and ` +
        `the same request gets the first answer again, with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`, without doing the operation twice ` +
        `(client errors are replayed too, but for a request refused by validation (400), which keeps nothing: correct it and send it again ` +
        `with the same key; after a 5xx the key may be retried). A request whose outcome at the provider was unknown ` +
        `(\`outcome: unknown\`) is never run again: its key answers 409 with Retry-After while Portico settles it, then the ` +
        `resource as settled. Keys belong to your tenant. Without it, every request runs.`,
      schema: {
        type: 'string',
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
        pattern: IDEMPOTENCY_KEY_PATTERN_SOURCE,
      },
    }),
    ApiProblems({
      409: `A request with this ${IDEMPOTENCY_KEY_HEADER} is still in progress, or its outcome at the provider is not settled yet (\`outcome: unknown\`); retry after Retry-After seconds to get its answer`,
      422: `This ${IDEMPOTENCY_KEY_HEADER} was already used with another request (another operation, path or body)`,
      503: `The ${IDEMPOTENCY_KEY_HEADER} store is unavailable; the request was not processed and may be retried with the same key`,
    }),
  );
}
