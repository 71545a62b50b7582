import { Inject, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { IdempotencyModule } from '../platform/idempotency/idempotency.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { UpstreamModule } from '../upstreams/open-banking/open-banking-upstream.module.js';
import { AccessLogService } from '../audit/trail/access-log.service.js';
import { AccountsController } from './accounts/accounts.controller.js';
import { AccountsService } from './accounts/accounts.service.js';
import { BudgetService } from './consent-access/budget.service.js';
import { ConsentGuardService } from './consent-access/consent-guard.service.js';
import { BrandsController } from './brands/brands.controller.js';
import { BrandsService } from './brands/brands.service.js';
import { ConsentsController } from './consents/consents.controller.js';
import { ConsentsService } from './consents/consents.service.js';
import { FundsConsentsController } from './consents/funds-consents.controller.js';
import { StatusHistoryService } from '../audit/trail/status-history.service.js';
import { FundsController } from './funds-confirmation/funds-confirmation.controller.js';
import { PaymentsController } from './payments/payments.controller.js';
import { PaymentsService } from './payments/payments.service.js';
import { ScaCallbackController } from './sca-callback/sca-callback.controller.js';
import { ScaSessionsService } from './sca-sessions/sca-sessions.service.js';
import { UpstreamCaller } from '../upstreams/http/upstream-caller.js';
import { OPEN_BANKING_ENTITIES } from './entities.js';

/** The open-banking facade: brands, consents, accounts, funds, payments, the SCA return, and their audit trail. */
@Module({
  imports: [TypeOrmModule.forFeature(OPEN_BANKING_ENTITIES), UpstreamModule, IdempotencyModule],
  controllers: [
    BrandsController,
    ConsentsController,
    FundsConsentsController,
    AccountsController,
    FundsController,
    PaymentsController,
    ScaCallbackController,
  ],
  providers: [
    UpstreamCaller,
    BrandsService,
    ConsentsService,
    StatusHistoryService,
    ScaSessionsService,
    AccessLogService,
    BudgetService,
    ConsentGuardService,
    AccountsService,
    PaymentsService,
  ],
  exports: [AccessLogService, StatusHistoryService, ConsentsService, PaymentsService],
})
export class OpenBankingModule implements OnApplicationBootstrap {
  constructor(
    private readonly consents: ConsentsService,
    private readonly payments: PaymentsService,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Rows a crash left between "written" and "completed" are resolved against the bank at start. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.reconcileOnStart) return;
    try {
      const consents = await this.consents.reconcile();
      const payments = await this.payments.reconcile();
      if (consents.failed + consents.refreshed + payments > 0)
        this.logger.info({ consents, payments }, 'reconciled half-written consents and payments');
    } catch (error) {
      this.logger.error(
        { err: error },
        'reconciliation at start failed; it runs again at the next start',
      );
    }
  }
}
