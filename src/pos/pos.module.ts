import { Module } from '@nestjs/common';
import { ProviderLedgerModule } from '../provider-ledger/provider-ledger.module.js';
import { IdempotencyModule } from '../platform/idempotency/idempotency.module.js';
import { PosUpstreamModule } from '../upstreams/pos/pos-upstream.module.js';
import { PosInDoubtResolver } from './pos-in-doubt-resolver.service.js';
import { PosStore } from './store/pos-store.service.js';
import { PosTerminalsController } from './terminals/pos-terminals.controller.js';
import { PosTerminalsService } from './terminals/pos-terminals.service.js';
import { PosBoundResources } from './transactions/pos-bound-resources.js';
import { PosTransactionsController } from './transactions/pos-transactions.controller.js';
import { PosTransactionsService } from './transactions/pos-transactions.service.js';
import { PosTransactionSync } from './transactions/pos-transaction-sync.js';

/**
 * The POS terminal facade (`/v1/pos/...`): payments and voids on a tenant's terminals with a bounded
 * wait (202 and polling beyond it), their results resolved by transaction_id, the terminals and their
 * transactions pending for the ERP; rows in the provider-resource ledger's table, calls in the access log.
 */
@Module({
  imports: [ProviderLedgerModule, PosUpstreamModule, IdempotencyModule],
  controllers: [PosTransactionsController, PosTerminalsController],
  providers: [
    PosStore,
    PosTransactionsService,
    PosTransactionSync,
    PosTerminalsService,
    PosInDoubtResolver,
    PosBoundResources,
  ],
  exports: [PosInDoubtResolver, PosStore, PosTransactionsService],
})
export class PosModule {}
