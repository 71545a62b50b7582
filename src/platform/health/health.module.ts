import { Module } from '@nestjs/common';
import { OpenBankingUpstreamModule } from '../../upstreams/open-banking/open-banking-upstream.module.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';

@Module({
  imports: [OpenBankingUpstreamModule],
  controllers: [HealthController],
  providers: [HealthService],
  exports: [HealthService],
})
export class HealthModule {}
