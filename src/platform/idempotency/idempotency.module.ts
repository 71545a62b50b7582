import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BoundResources } from './bound-resources.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyRecord } from './idempotency-record.entity.js';
import { IdempotencyStore } from './idempotency.store.js';
import { IdempotencyRecordsRepository } from './idempotency-records.repository.js';

/**
 * Idempotency-Key support for POST operations. A capability module imports it and marks routes with
 * @Idempotent(); the interceptor is instantiated in that module and finds the store through this import.
 * A module whose writes bind keys to resources registers their reader with BoundResources.
 */
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyRecord])],
  providers: [
    IdempotencyRecordsRepository,
    IdempotencyStore,
    IdempotencyInterceptor,
    BoundResources,
  ],
  exports: [IdempotencyStore, IdempotencyInterceptor, BoundResources],
})
export class IdempotencyModule {}
