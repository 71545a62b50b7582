import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import {
  DatabaseMaintenanceJob,
  VACUUM_EVERY_PASSES,
} from '#src/platform/database/database-maintenance.job.js';
import {
  DatabaseMaintenanceRepository,
  HOT_TABLES,
  MAINTENANCE_LOCK_KEY,
} from '#src/platform/database/database-maintenance.repository.js';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { createLogger } from '#src/platform/logging/logger.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { eventually } from '../support/chaos.js';
import { startTestGateway, testDatabaseUrl } from '../support/test-gateway.js';

interface TableStats {
  relname: string;
  last_analyze: Date | null;
  last_vacuum: Date | null;
}

async function statsOf(dataSource: DataSource): Promise<Map<string, TableStats>> {
  // A table partitioned by month (the access log, the chain) is vacuumed in its partitions: its
  // latest vacuum is theirs.
  const rows = (await dataSource.query(
    `SELECT p.relname, max(s.last_analyze) AS last_analyze, max(s.last_vacuum) AS last_vacuum
       FROM pg_class p
       LEFT JOIN pg_inherits i ON i.inhparent = p.oid
       JOIN pg_stat_user_tables s ON s.relid = p.oid OR s.relid = i.inhrelid
      WHERE p.relnamespace = current_schema()::regnamespace AND p.relname = ANY($1::text[])
      GROUP BY p.relname`,
    [HOT_TABLES],
  )) as TableStats[];
  return new Map(rows.map((row) => [row.relname, row]));
}

const time = (at: Date | null | undefined) => at?.getTime() ?? 0;

describe('database maintenance (the db-analyze job)', () => {
  const embedded = !process.env.DATABASE_URL;

  it('analyses every hot table each DB_ANALYZE_INTERVAL_MS, without error', async () => {
    const gateway = await startTestGateway({ DB_ANALYZE_INTERVAL_MS: '300' });
    try {
      const before = await statsOf(gateway.dataSource);
      expect([...before.keys()].sort()).toEqual([...HOT_TABLES].sort());
      const runs = async (outcome: string) => {
        const metric = await gateway.app
          .get(Metrics)
          .registry.getSingleMetric('portico_job_runs_total')!
          .get();
        return (
          metric.values.find((v) => v.labels.job === 'db-analyze' && v.labels.outcome === outcome)
            ?.value ?? 0
        );
      };
      let after = before;
      const moved = () =>
        HOT_TABLES.every(
          (table) => time(after.get(table)?.last_analyze) > time(before.get(table)?.last_analyze),
        );
      // A pass is counted once it has released its lock, a little after the statistics moved.
      const deadline = Date.now() + 15_000;
      while (!(moved() && (await runs('ok')) >= 1) && Date.now() < deadline) {
        await sleep(100);
        after = await statsOf(gateway.dataSource);
      }
      expect(moved()).toBe(true);
      expect(await runs('ok')).toBeGreaterThanOrEqual(1);
      expect(await runs('failed')).toBe(0);
    } finally {
      await gateway.close();
    }
  });

  describe('a pass', () => {
    let dataSource: DataSource;
    let sut: DatabaseMaintenanceJob;

    beforeAll(async () => {
      dataSource = await new DataSource(dataSourceOptions(testDatabaseUrl(), 2)).initialize();
      const logger = createLogger('silent');
      const config = { database: { analyzeIntervalMs: 0 } } as AppConfig;
      sut = new DatabaseMaintenanceJob(
        new DatabaseMaintenanceRepository(dataSource),
        config,
        logger,
        new Scheduler(logger),
      );
    });

    afterAll(() => dataSource.destroy());

    it('is skipped when the hot tables were analysed within the interval (by any replica)', async () => {
      expect(await sut.run(1)).toBe('analyze');
      expect(await sut.run(60_000)).toBe('skipped');
      // Once 40 ms have passed since that pass, by the database's clock, the next one analyses.
      await eventually(
        async () => (await sut.run(40)) === 'analyze',
        5_000,
        'a pass that analyses',
      );
    });

    (embedded ? it.skip : it)('gives way while another replica holds the lock', async () => {
      const other = new pg.Client({ connectionString: testDatabaseUrl() });
      await other.connect();
      try {
        await other.query('SELECT pg_advisory_lock($1)', [MAINTENANCE_LOCK_KEY]);
        expect(await sut.run(1)).toBe('skipped');
        await other.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
        expect(await sut.run(1)).toBe('analyze');
      } finally {
        await other.end();
      }
    });

    it(`vacuums too every ${VACUUM_EVERY_PASSES}th pass on the embedded engine only (no autovacuum there)`, async () => {
      const before = await statsOf(dataSource);
      const passes: string[] = [];
      for (let i = 0; i < VACUUM_EVERY_PASSES; i++) passes.push(await sut.run(1));
      const after = await statsOf(dataSource);
      const vacuumed = HOT_TABLES.every(
        (table) => time(after.get(table)?.last_vacuum) > time(before.get(table)?.last_vacuum),
      );
      if (embedded) {
        expect(passes.filter((what) => what === 'vacuum')).toHaveLength(1);
        expect(passes.filter((what) => what === 'analyze')).toHaveLength(VACUUM_EVERY_PASSES - 1);
        expect(vacuumed).toBe(true);
      } else {
        expect(passes).toEqual(Array(VACUUM_EVERY_PASSES).fill('analyze'));
      }
    });
  });
});
