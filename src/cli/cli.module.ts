import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_ENTITIES } from '../app-entities.js';
import type { Logger } from 'pino';
import type { AppConfig } from '../platform/config/app-config.js';
import { ConfigModule } from '../platform/config/config.module.js';
import { DatabaseModule } from '../platform/database/database.module.js';
import { LoggingModule } from '../platform/logging/logging.module.js';
import { TenantsModule } from '../access/tenants/tenants.module.js';
import { CardCredentialsModule } from '../access/merchant-credentials/card-credentials.module.js';
import { AuditTrailModule } from '../audit/trail/audit-trail.module.js';
import { WebhooksCoreModule } from '../webhooks/webhooks.module.js';
import { SchedulerModule } from '../platform/scheduler/scheduler.js';
import { InDoubtModule } from '../platform/in-doubt/in-doubt-settlers.js';
import { ProviderSyncModule } from '../platform/provider-sync/provider-sync.js';
import { MetricsModule } from '../platform/metrics/metrics.module.js';
import { ReadinessModule } from '../platform/health/readiness-registry.js';
import { TracingModule } from '../platform/tracing/tracing.module.js';
import { ID_ONLY_TRACER } from '../platform/tracing/tracer.js';
import { ReconciliationModule } from '../reconciliation/reconciliation.module.js';

/** What the CLI needs: configuration, the database and the services it drives; no HTTP. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        DatabaseModule,
        // The whole schema, whichever modules the CLI loads.
        TypeOrmModule.forFeature(APP_ENTITIES),
        SchedulerModule.idle(),
        TenantsModule,
        AuditTrailModule,
        WebhooksCoreModule,
        CardCredentialsModule,
        // reconcile: the card side and its ledger, whose registrations the idle scheduler never runs.
        MetricsModule,
        TracingModule.forRoot(ID_ONLY_TRACER),
        ReadinessModule,
        InDoubtModule,
        ProviderSyncModule,
        ReconciliationModule,
      ],
    };
  }
}
