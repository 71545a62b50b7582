import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { LoggingModule } from '../logging/logging.module.js';
import { TenantsModule } from '../tenants/tenants.module.js';

/** What the CLI needs: configuration, the database and the services it drives; no HTTP. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return { module: CliModule, imports: [ConfigModule.forRoot(config), LoggingModule.forRoot(logger), DatabaseModule, TenantsModule] };
  }
}
