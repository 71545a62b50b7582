import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessLogEntry } from './access-log-entry.entity.js';
import { AccessLogService } from './access-log.service.js';
import { AuditChainMetrics } from './audit-chain-metrics.js';
import { StatusChange } from './status-change.entity.js';
import { StatusHistoryService } from './status-history.service.js';
import {
  AuditArchive,
  AuditChainLink,
  AuditCheckpoint,
  AuditRetentionCut,
  AuditVerification,
  AuditSealFloor,
  WriterLease,
} from './audit-chain.entity.js';
import { WriterLeaseService } from './writer-lease.js';
import { AuditChainRepository } from './audit-chain.repository.js';
import { AuditChainService } from './audit-chain.service.js';
import { AuditVerifierService } from './audit-verifier.service.js';
import { AuditRetentionService } from './audit-retention.service.js';
import { AuditVerificationJob } from './audit-verification.job.js';
import { AuditPartitionsService } from './audit-partitions.js';
import { StatusTransitionsModule } from './status-transition-listeners.js';
import { AuditArchiveRepository } from './audit-archive.repository.js';
import { AuditArchiveService } from './audit-archive.service.js';

/**
 * The append-only audit trail: status histories and the access log, written by every capability, and
 * the tamper-evident chain that seals them (sealer, signed checkpoints, verifier).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      StatusChange,
      AccessLogEntry,
      AuditChainLink,
      AuditCheckpoint,
      AuditSealFloor,
      AuditRetentionCut,
      AuditVerification,
      AuditArchive,
      WriterLease,
    ]),
    StatusTransitionsModule,
  ],
  providers: [
    AuditChainRepository,
    StatusHistoryService,
    AccessLogService,
    AuditChainService,
    AuditVerifierService,
    AuditRetentionService,
    AuditVerificationJob,
    AuditPartitionsService,
    AuditArchiveRepository,
    AuditArchiveService,
    WriterLeaseService,
    AuditChainMetrics,
  ],
  exports: [
    StatusHistoryService,
    AccessLogService,
    AuditChainService,
    AuditVerifierService,
    AuditRetentionService,
    AuditVerificationJob,
    AuditPartitionsService,
    AuditArchiveService,
  ],
})
export class AuditTrailModule {}
