import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { stateGauge } from '#src/platform/metrics/state-gauge.js';
import { AuditChainRepository } from './audit-chain.repository.js';

/**
 * The sealer's lag, the last signed checkpoint and the last verification, read from the database at each scrape: what an
 * operator watches to know the trail is being sealed and signed (the seal job's failures are in
 * `portico_job_runs_total{job="audit-seal"}`).
 */
@Injectable()
export class AuditChainMetrics implements OnModuleInit {
  constructor(
    private readonly links: AuditChainRepository,
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
  }
}
