import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessLogEntry } from './access-log-entry.entity.js';
import { AccessLogService } from './access-log.service.js';
import { StatusChange } from './status-change.entity.js';
import { StatusHistoryService } from './status-history.service.js';

/** The append-only audit trail: status histories and the access log; written by every capability. */
@Module({
  imports: [TypeOrmModule.forFeature([StatusChange, AccessLogEntry])],
  providers: [StatusHistoryService, AccessLogService],
  exports: [StatusHistoryService, AccessLogService],
})
export class AuditTrailModule {}
