import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { TRACER } from '#src/platform/tracing/tracing.module.js';
import type { Tracer } from '#src/platform/tracing/tracer.js';
import { UpstreamCaller } from '../http/upstream-caller.js';
import { requestIdHeader, UpstreamTransport } from '../http/upstream-transport.js';
import { upstreamReadinessCheck } from '../http/upstream-readiness.js';
import { ReadinessRegistry } from '#src/platform/health/readiness-registry.js';
import { CertificateStatusService } from './qwac/certificate-status.service.js';
import { CertificatesModule } from './qwac/certificates.module.js';
import { certificateCheck } from './qwac/certificate-readiness.js';
import { parseTppMessages } from './berlin-group-errors.js';
import { OpenBankingClient } from './open-banking.client.js';
import { psd2Contract } from './psd2-schemas.js';
import { ClientCredentials } from './qwac/client-credentials.js';

export const OPEN_BANKING_TRANSPORT = Symbol('OPEN_BANKING_TRANSPORT');

/**
 * The open-banking upstream: its mTLS transport with the QWAC, its contract and its typed client. It
 * imports the QWAC's module itself, so that whatever loads it (the gateway, the CLI's reconcile) has it.
 */
@Module({
  imports: [CertificatesModule],
  providers: [
    {
      provide: OPEN_BANKING_TRANSPORT,
      inject: [APP_CONFIG, ClientCredentials],
      useFactory: (config: AppConfig, credentials: ClientCredentials) => {
        const { baseUrl, http } = config.upstreams.openBanking;
        if (!baseUrl)
          throw new Error(
            'the open-banking upstream address is not resolved (UPSTREAM_OB_BASE_URL, or in sandbox mode the sandbox at SANDBOX_OB_PORT, not 0)',
          );
        return new UpstreamTransport({
          name: 'open-banking',
          baseUrl,
          tls: { current: () => credentials.current() },
          ...http,
        });
      },
    },
    {
      provide: OpenBankingClient,
      inject: [OPEN_BANKING_TRANSPORT, APP_CONFIG, LOGGER, Metrics, TRACER],
      useFactory: (
        transport: UpstreamTransport,
        config: AppConfig,
        logger: Logger,
        metrics: Metrics,
        tracer: Tracer,
      ) => {
        const { http } = config.upstreams.openBanking;
        const caller = new UpstreamCaller(
          { name: 'open-banking', displayName: 'the bank', parseErrorBody: parseTppMessages },
          { deadlineMs: http.deadlineMs, retryDelaysMs: http.retryDelaysMs, breaker: http.breaker },
          logger,
          metrics,
          tracer,
        );
        return new OpenBankingClient(transport, psd2Contract, caller, (operation, problems) => {
          metrics.recordContractMismatch('open-banking', operation);
          logger.warn(
            { upstream: 'open-banking', operation, problems },
            'answer breaks the contract',
          );
        });
      },
    },
  ],
  exports: [OpenBankingClient, OPEN_BANKING_TRANSPORT],
})
export class OpenBankingUpstreamModule implements OnApplicationShutdown {
  constructor(
    @Inject(OPEN_BANKING_TRANSPORT) private readonly transport: UpstreamTransport,
    client: OpenBankingClient,
    certificates: CertificateStatusService,
    readiness: ReadinessRegistry,
  ) {
    readiness.register('certificate', () => certificateCheck(certificates));
    readiness.register(
      'upstream',
      upstreamReadinessCheck({
        label: 'GET /brands',
        send: async () =>
          (await client.api.GET('/brands', { params: { header: requestIdHeader() } })).response
            .status,
        serving: (status) => status >= 200 && status < 300,
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}
