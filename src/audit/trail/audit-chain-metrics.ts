import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { stateGauge } from '#src/platform/metrics/state-gauge.js';
import { AuditChainRepository } from './audit-chain.repository.js';
import { AuditArchiveRepository } from './audit-archive.repository.js';
import { AuditRetentionService } from './audit-retention.service.js';

/**
 * The sealer's lag, the last signed checkpoint and the last verification, read from the database at each scrape: what an
 * operator watches to know the trail is being sealed and signed (the seal job's failures are in
 * `portico_job_runs_total{job="audit-seal"}`).
 */
@Injectable()
export class AuditChainMetrics implements OnModuleInit {
  constructor(
    private readonly links: AuditChainRepository,
    private readonly archives: AuditArchiveRepository,
    private readonly retention: AuditRetentionService,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    const backlog = () => this.links.sealBacklog();
    stateGauge(this.metrics, {
      name: 'portico_audit_unsealed_rows',
      help: 'Rows of the audit trail not sealed into the chain yet, by kind (access_log, status_change)',
      labelNames: ['kind'],
      read: async () =>
        (await backlog()).map(({ kind, rows }) => ({ labels: { kind }, value: rows })),
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_unsealed_oldest_seconds',
      help: "Age of the oldest row not sealed yet, by kind (0 when none): the sealer's lag",
      labelNames: ['kind'],
      read: async () =>
        (await backlog()).map(({ kind, oldestSeconds }) => ({
          labels: { kind },
          value: oldestSeconds,
        })),
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_last_checkpoint_timestamp_seconds',
      help: 'When the newest signed checkpoint of the audit chain was signed (Unix seconds; absent before the first)',
      read: async () => {
        const at = await this.links.lastCheckpointAt();
        return at ? [{ value: at.getTime() / 1000 }] : [];
      },
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_last_verification_timestamp_seconds',
      help: 'When the newest verification of the audit chain finished (Unix seconds; absent before the first)',
      read: async () => {
        const last = await this.links.lastVerification();
        return last ? [{ value: last.at.getTime() / 1000 }] : [];
      },
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_last_verification_ok',
      help: 'Whether the newest verification of the audit chain found it whole (1) or a break (0); absent before the first',
      read: async () => {
        const last = await this.links.lastVerification();
        return last ? [{ value: last.ok ? 1 : 0 }] : [];
      },
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_default_partition_rows',
      help: 'Rows in the default partition of the access log or the audit chain (table): rows dated in a month that has no partition, which retention never drops; kept empty (docs/operations.md)',
      labelNames: ['table'],
      read: async () =>
        (await this.archives.defaultPartitionRows()).map(({ table, rows }) => ({
          labels: { table },
          value: rows,
        })),
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_last_archive_timestamp_seconds',
      help: 'When the newest archive of a closed month was written (Unix seconds; absent before the first)',
      read: async () => {
        const last = await this.archives.lastArchive();
        return last ? [{ value: last.at.getTime() / 1000 }] : [];
      },
    });
    stateGauge(this.metrics, {
      name: 'portico_audit_retention_kept_months',
      help: 'Months past the audit retention period still in the database because they are not archived (retention never drops such a month)',
      read: async () => [{ value: await this.retention.unarchivedExpiredMonths() }],
    });
  }
}
