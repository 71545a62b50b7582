import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CardModule } from '../card/card.module.js';
import { ProviderLedgerModule } from '../provider-ledger/provider-ledger.module.js';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module.js';
import { ListReconciler } from './list-reconciler.js';
import { ByIdReconciler } from './by-id-reconciler.js';
import { OpenBankingKinds } from './open-banking-kinds.js';
import { PosKinds } from './pos-kinds.js';
import { PosModule } from '../pos/pos.module.js';
import { ReconciliationRuns } from './reconciliation-runs.service.js';
import { ReconciliationController } from './reconciliation.controller.js';
import { RECONCILIATION_ENTITIES } from './reconciliation.entities.js';
import { ReconciliationRepository } from './reconciliation.repository.js';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { Payment } from '../open-banking/payments/payment.entity.js';
import { ReconciliationService } from './reconciliation.service.js';

/**
 * Reconciliation of Portico's records with the provider's (docs/reconciliation.md): runs of a tenant's
 * window of days on the provider-resource ledger, under a lease, daily and on demand; their records and
 * drifts for the auditor, a `reconciliation.drift` event for each drift.
 */
@Module({
  imports: [
    // Its runs' own tables, and open banking's consents and payments that a run by id reads (the CLI
    // loads no open-banking module to register them).
    TypeOrmModule.forFeature([...RECONCILIATION_ENTITIES, Consent, Payment]),
    ProviderLedgerModule,
    CardModule,
    PosModule,
    WebhookOutboxModule,
  ],
  controllers: [ReconciliationController],
  providers: [
    ReconciliationRepository,
    ListReconciler,
    ByIdReconciler,
    OpenBankingKinds,
    PosKinds,
    ReconciliationService,
    ReconciliationRuns,
  ],
  exports: [ReconciliationRuns],
})
export class ReconciliationModule {}
