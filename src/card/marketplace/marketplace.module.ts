import { Module } from '@nestjs/common';
import { IdempotencyModule } from '#src/platform/idempotency/idempotency.module.js';
import { ProviderLedgerModule } from '#src/provider-ledger/provider-ledger.module.js';
import { CardModule } from '../card.module.js';
import { MarketplaceInDoubtResolver } from './marketplace-in-doubt-resolver.service.js';
import { MarketplacePayoutsController } from './marketplace-payouts.controller.js';
import { MarketplacePayoutsService } from './marketplace-payouts.service.js';
import { MarketplaceResources } from './marketplace-resources.js';
import { MarketplaceSellersController } from './marketplace-sellers.controller.js';
import { MarketplaceSellersService } from './marketplace-sellers.service.js';
import { MarketplaceTransfersController } from './marketplace-transfers.controller.js';
import { MarketplaceTransfersService } from './marketplace-transfers.service.js';

/**
 * The card provider's marketplace behind the facade (`/v1/marketplace/...`): a tenant is one
 * marketplace (its merchant at the provider); sellers, split and direct transfers, reversals, payouts
 * and balances, every money movement in the provider-resource ledger (rows, history, access log) before and after
 * the provider is called.
 */
@Module({
  imports: [CardModule, ProviderLedgerModule, IdempotencyModule],
  controllers: [
    MarketplaceSellersController,
    MarketplaceTransfersController,
    MarketplacePayoutsController,
  ],
  providers: [
    MarketplaceResources,
    MarketplaceInDoubtResolver,
    MarketplaceSellersService,
    MarketplaceTransfersService,
    MarketplacePayoutsService,
  ],
  exports: [MarketplaceInDoubtResolver],
})
export class MarketplaceModule {}
