import { Global, Module } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/app-config.js';
import { APP_CONFIG } from '../../../platform/config/config.module.js';
import { CertificateStatusService } from './certificate-status.service.js';
import { ClientCredentials, upstreamTlsFiles } from './client-credentials.js';

/** The QWAC: its files (reloaded when renewed) and its checks. */
@Global()
@Module({
  providers: [
    {
      provide: ClientCredentials,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new ClientCredentials(upstreamTlsFiles(config)),
    },
    CertificateStatusService,
  ],
  exports: [ClientCredentials, CertificateStatusService],
})
export class CertificatesModule {}
