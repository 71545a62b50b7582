import { Module } from '@nestjs/common';
import { AuditTrailModule } from '../audit/trail/audit-trail.module.js';
import { IdempotencyModule } from '../platform/idempotency/idempotency.module.js';
import { ProviderLedgerModule } from '../provider-ledger/provider-ledger.module.js';
import { CardUpstreamModule } from '../upstreams/card/card-upstream.module.js';
import { CardBranchesController } from './branches/card-branches.controller.js';
import { CardBranchesService } from './branches/card-branches.service.js';
import { CardTokensController } from './card-tokens/card-tokens.controller.js';
import { CardTokensService } from './card-tokens/card-tokens.service.js';
import { CardTokenizationController } from './browser-tokens/card-tokenization.controller.js';
import { CardTokenizationService } from './browser-tokens/card-tokenization.service.js';
import { TokenizePageController } from './browser-tokens/tokenize-page.controller.js';
import { CardCredentialsModule } from '../access/merchant-credentials/card-credentials.module.js';
import { CardCustomersController } from './customers/card-customers.controller.js';
import { CardCustomersService } from './customers/card-customers.service.js';
import { CardInDoubtResolver } from './card-in-doubt-resolver.service.js';
import { CardPaymentsController } from './payments/card-payments.controller.js';
import { CardPaymentsService } from './payments/card-payments.service.js';
import { CardRefundsController } from './refunds/card-refunds.controller.js';
import { CardRefundsService } from './refunds/card-refunds.service.js';
import { CardIrisController } from './iris/card-iris.controller.js';
import { CardIrisResultsController } from './iris/card-iris-results.controller.js';
import { CardIrisResultsService } from './iris/card-iris-results.service.js';
import { CardIrisService } from './iris/card-iris.service.js';
import { CardNotificationsController } from './notifications/card-notifications.controller.js';
import { CardNotificationsService } from './notifications/card-notifications.service.js';
import { NotificationSync } from './notifications/notification-sync.js';
import { PaymentRefreshSync } from './payments/payment-refresh-sync.js';
import { IrisSessionSync } from './iris/iris-session-sync.js';
import { CardBoundResources } from './store/card-bound-resources.js';
import { CardStore } from './store/card-store.service.js';
import { CardWalletDomainsController } from './wallets/card-wallet-domains.controller.js';
import { CardWalletDomainsService } from './wallets/card-wallet-domains.service.js';
import { CardWalletResultsController } from './wallets/card-wallet-results.controller.js';
import { CardWalletResultsService } from './wallets/card-wallet-results.service.js';
import { CardWalletsController } from './wallets/card-wallets.controller.js';
import { CardWalletsService } from './wallets/card-wallets.service.js';

/**
 * The card API facade (`/v1/card/...`): a service per capability (payments, refunds, card tokens,
 * browser-side tokenisation (public key, token endpoint, embeddable page), customers with their cards and mandates, branches, notifications, IRIS sessions and their results,
 * web-wallet tokenisations and device-wallet domains) on the provider-resource ledger (rows, status
 * history, write-ahead access log, writes in doubt) and the card upstream client, with each tenant's
 * merchant keys.
 */
@Module({
  imports: [
    ProviderLedgerModule,
    AuditTrailModule,
    IdempotencyModule,
    CardCredentialsModule,
    CardUpstreamModule,
  ],
  controllers: [
    CardPaymentsController,
    CardRefundsController,
    CardTokensController,
    CardTokenizationController,
    TokenizePageController,
    CardCustomersController,
    CardBranchesController,
    CardNotificationsController,
    CardIrisController,
    CardIrisResultsController,
    CardWalletsController,
    CardWalletDomainsController,
    CardWalletResultsController,
  ],
  providers: [
    CardStore,
    CardBoundResources,
    CardPaymentsService,
    CardRefundsService,
    CardTokensService,
    CardTokenizationService,
    CardCustomersService,
    CardBranchesService,
    CardInDoubtResolver,
    CardNotificationsService,
    NotificationSync,
    PaymentRefreshSync,
    CardIrisService,
    IrisSessionSync,
    CardIrisResultsService,
    CardWalletsService,
    CardWalletDomainsService,
    CardWalletResultsService,
  ],
  exports: [CardInDoubtResolver, CardStore],
})
export class CardModule {}
