import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditTrailModule } from '../audit/trail/audit-trail.module.js';
import { ProviderLedger } from './provider-ledger.service.js';
import { ProviderResource } from './provider-resource.entity.js';

/**
 * The provider-resource ledger, between the facades and the trail, the upstream seam and the platform:
 * every capability that calls a provider keeps its rows, calls and writes in doubt through it. It
 * imports no facade; facades declare their kinds and how to settle one row.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ProviderResource]), AuditTrailModule],
  providers: [ProviderLedger],
  exports: [ProviderLedger, TypeOrmModule],
})
export class ProviderLedgerModule {}
