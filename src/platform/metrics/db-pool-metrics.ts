import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { Metrics } from './metrics.service.js';

/** Feeds the pool gauge from the pg Pool under TypeORM's DataSource, read at each scrape. */
@Injectable()
export class DbPoolMetrics implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.metrics.watchDbPool(() => {
      // typeorm 1.1 types the pool as any; it is a pg Pool, absent before connect and after destroy.
      const pool = (this.dataSource.driver as PostgresDriver).master as Pool | undefined;
      if (!pool) return undefined;
      return {
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
        max: pool.options.max,
      };
    });
  }
}
