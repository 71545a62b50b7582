import { DynamicModule, Module, type Type } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from './platform/config/app-config.js';
import { CertificatesModule } from './upstreams/open-banking/qwac/certificates.module.js';
import { ConfigModule } from './platform/config/config.module.js';
import { DatabaseModule } from './platform/database/database.module.js';
import { AuditModule } from './audit/audit.module.js';
import { HealthModule } from './health/health.module.js';
import { OpenBankingModule } from './open-banking/open-banking.module.js';
import { LoggingModule } from './platform/logging/logging.module.js';
import { MetricsModule } from './platform/metrics/metrics.module.js';
import { TenantsModule } from './access/tenants/tenants.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { CardModule } from './card/card.module.js';
import { MarketplaceModule } from './card/marketplace/marketplace.module.js';
import { PosModule } from './pos/pos.module.js';
import { ReconciliationModule } from './reconciliation/reconciliation.module.js';
import { InDoubtModule } from './platform/in-doubt/in-doubt-settlers.js';
import { SchedulerModule } from './platform/scheduler/scheduler.js';
import { ProviderSyncModule } from './platform/provider-sync/provider-sync.js';
import { ID_ONLY_TRACER, type Tracer } from './platform/tracing/tracer.js';
import { TracingModule } from './platform/tracing/tracing.module.js';

/** The gateway: one module per capability, configured by one typed config object. */
@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    logger: Logger,
    extra: unknown[] = [],
    tracer: Tracer = ID_ONLY_TRACER,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        TracingModule.forRoot(tracer),
        MetricsModule,
        SchedulerModule,
        DatabaseModule,
        InDoubtModule,
        ProviderSyncModule,
        CertificatesModule,
        TenantsModule,
        HealthModule,
        OpenBankingModule,
        AuditModule,
        WebhooksModule,
        CardModule,
        MarketplaceModule,
        PosModule,
        ReconciliationModule,
        ...(extra as Type[]),
      ],
    };
  }
}
