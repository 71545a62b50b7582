import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { isEmbeddedEngine } from '#src/shared/embedded-engine.js';

/** The advisory lock the replica that maintains the tables holds meanwhile. */
export const MAINTENANCE_LOCK_KEY = 74_111_008;

/** The tables written on every request (or every few): their statistics go stale first. */
export const HOT_TABLES = [
  'access_log',
  'audit_chain',
  'status_changes',
  'provider_resources',
  'consents',
  'payments',
  'webhook_deliveries',
  'idempotency_records',
  'api_key_usage',
  'consent_usage',
] as const;

/** What a maintenance pass does: refresh the planner's statistics, or also reclaim dead rows. */
export type Maintenance = 'analyze' | 'vacuum';

/** The SQL of database maintenance: its lock, when the hot tables were last analysed, ANALYZE and VACUUM. */
@Injectable()
export class DatabaseMaintenanceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Whether the database is the embedded engine (PGlite), which runs no autovacuum. */
  isEmbedded(): Promise<boolean> {
    return isEmbeddedEngine((this.dataSource.driver as PostgresDriver).master as pg.Pool);
  }

  /**
   * Runs `work` on a connection of its own holding the maintenance lock for the session (VACUUM cannot
   * run inside a transaction); undefined, at once, when another replica holds it.
   */
  async withLock<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T | undefined> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
        MAINTENANCE_LOCK_KEY,
      ])) as { locked: boolean }[];
      if (!locked) return undefined;
      try {
        return await work(runner);
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
      }
    } finally {
      await runner.release();
    }
  }

  /**
   * Whether a hot table was never analysed, or not within the last `withinMs` (by any replica: the
   * server's own record, pg_stat_user_tables).
   */
  async analyzeDue(runner: QueryRunner, withinMs: number): Promise<boolean> {
    const [{ due }] = (await runner.query(
      `SELECT count(*) < $2 OR coalesce(bool_or(last_analyze IS NULL
                OR last_analyze < now() - make_interval(secs => $3::double precision / 1000)), false) AS due
         FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY($1::text[])`,
      [HOT_TABLES, HOT_TABLES.length, withinMs],
    )) as { due: boolean }[];
    return due;
  }

  /** Refreshes the hot tables' statistics; `vacuum` also reclaims their dead rows (one statement). */
  async maintain(runner: QueryRunner, what: Maintenance): Promise<void> {
    await runner.query(
      `${what === 'vacuum' ? 'VACUUM (ANALYZE)' : 'ANALYZE'} ${HOT_TABLES.join(', ')}`,
    );
  }
}
