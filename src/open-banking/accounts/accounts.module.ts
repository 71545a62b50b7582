import { Module } from '@nestjs/common';
import { OpenBankingUpstreamModule } from '#src/upstreams/open-banking/open-banking-upstream.module.js';
import { ConsentAccessModule } from '../consent-access/consent-access.module.js';
import { AccountsController } from './accounts.controller.js';
import { AccountsService } from './accounts.service.js';

/** Accounts, balances and transactions under a consent. */
@Module({
  imports: [ConsentAccessModule, OpenBankingUpstreamModule],
  controllers: [AccountsController],
  providers: [AccountsService],
})
export class AccountsModule {}
