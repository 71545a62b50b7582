import { Module } from '@nestjs/common';
import { ProviderLedgerModule } from '#src/provider-ledger/provider-ledger.module.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditTrailModule } from '#src/audit/trail/audit-trail.module.js';
import { IdempotencyModule } from '#src/platform/idempotency/idempotency.module.js';
import { OpenBankingUpstreamModule } from '#src/upstreams/open-banking/open-banking-upstream.module.js';
import { ScaSessionsModule } from '../sca-sessions/sca-sessions.module.js';
import { Consent } from './consent.entity.js';
import { ConsentsController } from './consents.controller.js';
import { ConsentsService } from './consents.service.js';
import { ConsentsRepository } from './consents.repository.js';
import { ConsentRenewalRepository } from './consent-renewal.repository.js';
import { ConsentRenewalDueJob } from './consent-renewal-due.job.js';
import { WebhookOutboxModule } from '#src/webhooks/webhook-outbox.module.js';
import { FundsConsentsController } from './funds-consents.controller.js';

/** The consent store: account-information and confirmation-of-funds consents, kept in step with the bank, and the warning of their renewal due. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Consent]),
    AuditTrailModule,
    ProviderLedgerModule,
    ScaSessionsModule,
    OpenBankingUpstreamModule,
    IdempotencyModule,
    WebhookOutboxModule,
  ],
  controllers: [ConsentsController, FundsConsentsController],
  providers: [ConsentsRepository, ConsentsService, ConsentRenewalRepository, ConsentRenewalDueJob],
  exports: [ConsentsService, ConsentsRepository, ConsentRenewalDueJob],
})
export class ConsentsModule {}
