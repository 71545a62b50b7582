import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Logger } from 'pino';
import { LOGGER } from '../logging/logging.module.js';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseMaintenanceJob } from './database-maintenance.job.js';
import { DatabaseMaintenanceRepository } from './database-maintenance.repository.js';
import { runMigrationsLocked } from './migrate.js';

/**
 * PostgreSQL through TypeORM; pending migrations run at start under an advisory lock, the schema is never
 * synchronised; the hot tables' statistics are kept fresh (DatabaseMaintenanceJob).
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG, LOGGER],
      useFactory: (config: AppConfig, logger: Logger) => {
        if (!config.database.url)
          throw new Error('database.url must be resolved before the app starts');
        // Each module registers its own entities (TypeOrmModule.forFeature); they are collected here.
        return {
          ...dataSourceOptions(config.database.url, config.database.poolSize, { logger }),
          autoLoadEntities: true,
        };
      },
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource(options as DataSourceOptions).initialize();
        await runMigrationsLocked(dataSource);
        return dataSource;
      },
    }),
  ],
  providers: [DatabaseMaintenanceRepository, DatabaseMaintenanceJob],
})
export class DatabaseModule {}
