import { Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { CertificateMetrics } from './certificate-metrics.js';
import { CertificateStatusService } from './certificate-status.service.js';
import { ClientCredentials, upstreamTlsFiles } from './client-credentials.js';

/** The QWAC: its files (reloaded when renewed) and its checks. */
@Global()
@Module({
  providers: [
    {
      provide: ClientCredentials,
      inject: [APP_CONFIG, LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new ClientCredentials(
          upstreamTlsFiles(config),
          logger,
          config.upstreams.openBanking.qwac.recheckMs,
        ),
    },
    CertificateStatusService,
    CertificateMetrics,
  ],
  exports: [ClientCredentials, CertificateStatusService],
})
export class CertificatesModule {}
