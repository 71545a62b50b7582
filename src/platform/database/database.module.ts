import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { dataSourceOptions } from './data-source-options.js';

/** PostgreSQL through TypeORM; pending migrations run at start, the schema is never synchronised. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (!config.database.url)
          throw new Error('database.url must be resolved before the app starts');
        return {
          ...dataSourceOptions(config.database.url, config.database.poolSize),
          migrationsRun: true,
        };
      },
    }),
  ],
})
export class DatabaseModule {}
