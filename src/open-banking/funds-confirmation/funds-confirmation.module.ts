import { Module } from '@nestjs/common';
import { OpenBankingUpstreamModule } from '#src/upstreams/open-banking/open-banking-upstream.module.js';
import { ConsentAccessModule } from '../consent-access/consent-access.module.js';
import { FundsConfirmationController } from './funds-confirmation.controller.js';
import { FundsConfirmationService } from './funds-confirmation.service.js';

/** Confirmation of funds under a confirmation-of-funds consent. */
@Module({
  imports: [ConsentAccessModule, OpenBankingUpstreamModule],
  controllers: [FundsConfirmationController],
  providers: [FundsConfirmationService],
})
export class FundsConfirmationModule {}
