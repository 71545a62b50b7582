import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { SEAL_LOCK_KEY } from './audit-chain.service.js';

export interface RetentionCutResult {
  seq: string;
  chainHash: string;
  rowsRemoved: number;
  removedBefore: Date;
}

const DAY_MS = 86_400_000;

/**
 * Removes the trail older than AUDIT_RETENTION_DAYS without breaking verification: it cuts the chain at
 * the newest signed checkpoint whose links all seal rows older than the period (so the cut's link hash
 * is one an auditor holds a signature for), removes those links and rows, and records the cut; the
 * verifier then starts from the cut's hash. Without a checkpoint old enough nothing is removed. Runs
 * under the sealer's lock, so it never races a sealer on another replica.
 */
@Injectable()
export class AuditRetentionService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    const { retentionDays, retentionIntervalMs } = this.config.audit;
    this.scheduler.register({
      name: 'audit-retention',
      intervalMs: retentionDays === 0 ? 0 : retentionIntervalMs,
      run: async () => {
        const cut = await this.cut();
        if (cut) this.logger.info({ ...cut }, 'audit retention: removed the trail before a cut');
      },
    });
  }

  async cut(now = new Date()): Promise<RetentionCutResult | undefined> {
    const { retentionDays } = this.config.audit;
    if (retentionDays === 0) return undefined;
    const removedBefore = new Date(now.getTime() - retentionDays * DAY_MS);
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [SEAL_LOCK_KEY]);
      // The first link that seals a row still inside the period: everything before it may go.
      const [{ keep }] = (await manager.query(
        `SELECT min(c.seq) AS keep FROM audit_chain c
         LEFT JOIN status_changes s ON c.entry_kind = 'status_change' AND s.id = c.entry_id
         LEFT JOIN access_log a ON c.entry_kind = 'access_log' AND a.id = c.entry_id
         WHERE coalesce(s.changed_at, a.created_at) >= $1`,
        [removedBefore],
      )) as { keep: string | null }[];
      const [checkpoint] = (await manager.query(
        `SELECT seq, chain_hash FROM audit_checkpoints
         WHERE ($1::bigint IS NULL OR seq < $1::bigint)
           AND seq > coalesce((SELECT max(seq) FROM audit_retention_cuts), 0)
           AND seq <= (SELECT coalesce(max(seq), 0) FROM audit_chain)
         ORDER BY seq DESC LIMIT 1`,
        [keep],
      )) as { seq: string; chain_hash: string }[];
      if (!checkpoint) return undefined;
      await manager.query(`SET LOCAL portico.retention = 'on'`);
      let rowsRemoved = 0;
      for (const [kind, table] of [
        ['status_change', 'status_changes'],
        ['access_log', 'access_log'],
      ] as const) {
        const [, removed] = (await manager.query(
          `DELETE FROM ${table} t USING audit_chain c
           WHERE c.entry_kind = '${kind}' AND c.entry_id = t.id AND c.seq <= $1`,
          [checkpoint.seq],
        )) as [unknown, number];
        rowsRemoved += removed;
      }
      await manager.query('DELETE FROM audit_chain WHERE seq <= $1', [checkpoint.seq]);
      await manager.query(
        `INSERT INTO audit_retention_cuts (seq, chain_hash, removed_before, cut_at, rows_removed)
         VALUES ($1, $2, $3, now(), $4)`,
        [checkpoint.seq, checkpoint.chain_hash, removedBefore, rowsRemoved],
      );
      return {
        seq: String(checkpoint.seq),
        chainHash: checkpoint.chain_hash,
        rowsRemoved,
        removedBefore,
      };
    });
  }
}
