import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { Payment } from '../open-banking/payments/payment.entity.js';
import { ProviderResource } from '../provider-ledger/provider-resource.entity.js';
import { AuditTrailModule } from './trail/audit-trail.module.js';
import { AuditController } from './audit.controller.js';
import { AuditService } from './audit.service.js';
import { AuditorPageController } from './page/auditor-page.controller.js';
import { AuditExportService } from './audit-export.service.js';
import { AuditViewsRepository } from './audit-views.repository.js';
import { AccessLogEntry } from './trail/access-log-entry.entity.js';
import { AuditCheckpoint } from './trail/audit-chain.entity.js';
import { Tenant } from '../access/tenants/tenant.entity.js';

/** The auditor's read of the trail: consents and payments with their status history and access log, the chain. */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      Consent,
      Payment,
      ProviderResource,
      AccessLogEntry,
      AuditCheckpoint,
      Tenant,
    ]),
    AuditTrailModule,
  ],
  controllers: [AuditController, AuditorPageController],
  providers: [AuditViewsRepository, AuditService, AuditExportService],
})
export class AuditModule {}
