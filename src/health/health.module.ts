import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { HealthService } from '../platform/health/health.service.js';
import { ReadinessModule } from '../platform/health/readiness-registry.js';

@Module({
  imports: [ReadinessModule],
  controllers: [HealthController],
  providers: [HealthService],
  exports: [HealthService],
})
export class HealthModule {}
