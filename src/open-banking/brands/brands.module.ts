import { Module } from '@nestjs/common';
import { OpenBankingUpstreamModule } from '#src/upstreams/open-banking/open-banking-upstream.module.js';
import { BrandsController } from './brands.controller.js';
import { BrandsService } from './brands.service.js';

/** The banks reachable through the provider. */
@Module({
  imports: [OpenBankingUpstreamModule],
  controllers: [BrandsController],
  providers: [BrandsService],
})
export class BrandsModule {}
