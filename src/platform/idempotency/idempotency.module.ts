import { Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyStore } from './idempotency.store.js';

/**
 * Idempotency-Key support for POST operations. A capability module imports it and marks routes with
 * @Idempotent(); the interceptor is instantiated in that module and finds the store through this import.
 */
@Module({
  providers: [IdempotencyStore, IdempotencyInterceptor],
  exports: [IdempotencyStore, IdempotencyInterceptor],
})
export class IdempotencyModule {}
