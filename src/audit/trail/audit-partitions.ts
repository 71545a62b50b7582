import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';

/** The tables partitioned by month: the access log (on created_at) and the chain (on entry_at). */
export const PARTITIONED_TABLES = ['access_log', 'audit_chain'] as const;
/** Months ahead of the current one whose partitions exist. */
export const MONTHS_AHEAD = 3;
/** One replica at a time creates partitions. */
const PARTITIONS_LOCK_KEY = 74_111_012;

/** A calendar month (UTC): its partition's suffix `pYYYY_MM` and its bounds. */
export interface Month {
  name: string;
  start: Date;
  end: Date;
}

export function monthOf(at: Date, offset = 0): Month {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
  const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return {
    name: `p${start.getUTCFullYear()}_${String(start.getUTCMonth() + 1).padStart(2, '0')}`,
    start,
    end,
  };
}

/**
 * Keeps the monthly partitions of the trail ahead of time: at start and every
 * AUDIT_PARTITION_INTERVAL_MS, one replica (an advisory lock) creates the partitions of the current
 * month and the MONTHS_AHEAD after it that are missing. A row no month holds lands in the table's
 * default partition (kept empty: a month cannot be created over rows of its range there).
 */
@Injectable()
export class AuditPartitionsService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    const intervalMs = this.config.audit.partitionIntervalMs;
    this.scheduler.register({
      name: 'audit-partitions',
      intervalMs,
      runAtStart: intervalMs > 0,
      run: async () => {
        const created = await this.createAhead();
        if (created.length)
          this.logger.info({ created }, 'audit trail: monthly partitions created');
      },
    });
  }

  /** Creates the missing partitions from the current month to MONTHS_AHEAD after it; their names. */
  async createAhead(now = new Date()): Promise<string[]> {
    const wanted = Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => monthOf(now, i));
    const missing: { table: string; month: Month }[] = [];
    for (const table of PARTITIONED_TABLES) {
      const existing = new Set(await this.partitionsOf(table));
      for (const month of wanted)
        if (!existing.has(`${table}_${month.name}`)) missing.push({ table, month });
    }
    if (missing.length === 0) return [];
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        PARTITIONS_LOCK_KEY,
      ])) as { locked: boolean }[];
      if (!locked) return [];
      for (const { table, month } of missing)
        await manager.query(
          `CREATE TABLE IF NOT EXISTS "${table}_${month.name}" PARTITION OF "${table}"
             FOR VALUES FROM ('${month.start.toISOString()}') TO ('${month.end.toISOString()}')`,
        );
      return missing.map(({ table, month }) => `${table}_${month.name}`);
    });
  }

  /** The names of the table's partitions, the default one included. */
  async partitionsOf(table: string): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT c.relname AS name FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = $1 AND p.relnamespace = current_schema()::regnamespace
        ORDER BY c.relname`,
      [table],
    )) as { name: string }[];
    return rows.map((row) => row.name);
  }
}
