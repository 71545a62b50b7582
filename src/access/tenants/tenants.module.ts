import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { RateLimitService } from '../auth/rate-limit.service.js';
import { ApiKeyCache } from './api-key-cache.js';
import { ApiKeyUsage } from './api-key-usage.entity.js';
import { ApiKey } from './api-key.entity.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { Tenant } from './tenant.entity.js';
import { TenantsController } from './tenants.controller.js';
import { TenantsRepository } from './tenants.repository.js';
import { TenantsService } from './tenants.service.js';

/** Global: every capability's controllers authenticate through its guard. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Tenant, ApiKey, ApiKeyUsage])],
  controllers: [TenantsController],
  providers: [
    TenantsRepository,
    ApiKeysRepository,
    TenantsService,
    ApiKeyCache,
    ApiKeyGuard,
    RateLimitService,
  ],
  exports: [TenantsService, ApiKeyGuard, RateLimitService],
})
export class TenantsModule {}
