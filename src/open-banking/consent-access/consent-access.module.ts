import { Module } from '@nestjs/common';
import { ProviderLedgerModule } from '#src/provider-ledger/provider-ledger.module.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditTrailModule } from '#src/audit/trail/audit-trail.module.js';
import { ConsentsModule } from '../consents/consents.module.js';
import { ConsentAccessGuard } from './consent-access.guard.js';
import { ConsentAccessService } from './consent-access.service.js';
import { ConsentUsage } from './consent-usage.entity.js';
import { ConsentUsageRepository } from './consent-usage.repository.js';

/** Calls under a consent: local rules, the daily budget of unattended reads, the access log. */
@Module({
  imports: [
    TypeOrmModule.forFeature([ConsentUsage]),
    ConsentsModule,
    AuditTrailModule,
    ProviderLedgerModule,
  ],
  providers: [ConsentUsageRepository, ConsentAccessService, ConsentAccessGuard],
  exports: [ConsentAccessService, ConsentAccessGuard],
})
export class ConsentAccessModule {}
