import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { AuditTrailModule } from './trail/audit-trail.module.js';
import { AuditController } from './audit.controller.js';
import { AuditService } from './audit.service.js';

/** The auditor's read of the trail: consents with their status history and access log. */
@Module({
  imports: [TypeOrmModule.forFeature([Consent]), AuditTrailModule],
  controllers: [AuditController],
  providers: [AuditService],
})
export class AuditModule {}
