import { Module } from '@nestjs/common';
import { UpstreamModule } from '../../upstreams/open-banking/open-banking-upstream.module.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';

@Module({
  imports: [UpstreamModule],
  controllers: [HealthController],
  providers: [HealthService],
  exports: [HealthService],
})
export class HealthModule {}
