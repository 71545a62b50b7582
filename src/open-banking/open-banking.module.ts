import { Inject, Module, type OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { AccountsModule } from './accounts/accounts.module.js';
import { BrandsModule } from './brands/brands.module.js';
import { ConsentAccessModule } from './consent-access/consent-access.module.js';
import { ConsentsModule } from './consents/consents.module.js';
import { ConsentsService } from './consents/consents.service.js';
import { FundsConfirmationModule } from './funds-confirmation/funds-confirmation.module.js';
import { PaymentsModule } from './payments/payments.module.js';
import { PaymentsService } from './payments/payments.service.js';
import { ScaCallbackModule } from './sca-callback/sca-callback.module.js';

/** The open-banking facade: one module per capability, and start-up reconciliation of their stores. */
@Module({
  imports: [
    BrandsModule,
    ConsentsModule,
    ConsentAccessModule,
    AccountsModule,
    FundsConfirmationModule,
    PaymentsModule,
    ScaCallbackModule,
  ],
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
