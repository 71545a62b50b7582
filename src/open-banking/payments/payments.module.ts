import { Module } from '@nestjs/common';
import { ProviderLedgerModule } from '#src/provider-ledger/provider-ledger.module.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditTrailModule } from '#src/audit/trail/audit-trail.module.js';
import { IdempotencyModule } from '#src/platform/idempotency/idempotency.module.js';
import { OpenBankingUpstreamModule } from '#src/upstreams/open-banking/open-banking-upstream.module.js';
import { ScaSessionsModule } from '../sca-sessions/sca-sessions.module.js';
import { Payment } from './payment.entity.js';
import { PaymentsController } from './payments.controller.js';
import { PaymentsService } from './payments.service.js';
import { PaymentsRepository } from './payments.repository.js';

/** Payment initiation: stored before and after the bank, with status history and access log. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Payment]),
    AuditTrailModule,
    ProviderLedgerModule,
    ScaSessionsModule,
    OpenBankingUpstreamModule,
    IdempotencyModule,
  ],
  controllers: [PaymentsController],
  providers: [PaymentsRepository, PaymentsService],
  exports: [PaymentsService],
})
export class PaymentsModule {}
