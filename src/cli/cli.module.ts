import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../platform/config/app-config.js';
import { ConfigModule } from '../platform/config/config.module.js';
import { DatabaseModule } from '../platform/database/database.module.js';
import { LoggingModule } from '../platform/logging/logging.module.js';
import { SchedulerModule } from '../platform/scheduler/scheduler.js';
import { MetricsModule } from '../platform/metrics/metrics.module.js';
import { ReadinessModule } from '../platform/health/readiness-registry.js';
import type { CliImports } from './commands.js';

/** What a CLI command needs: configuration, the database and the modules of the services it drives; no HTTP. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, logger: Logger, imports: CliImports): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        DatabaseModule,
        // Its jobs are registered but never run: the command drives the work itself.
        SchedulerModule.idle(),
        MetricsModule,
        ReadinessModule,
        ...imports,
      ],
    };
  }
}
