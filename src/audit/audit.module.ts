import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { OpenBankingModule } from '../open-banking/open-banking.module.js';
import { AuditController } from './audit.controller.js';
import { AuditService } from './audit.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Consent]), OpenBankingModule],
  controllers: [AuditController],
  providers: [AuditService],
})
export class AuditModule {}
