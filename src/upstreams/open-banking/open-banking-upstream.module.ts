import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ClientCredentials } from './qwac/client-credentials.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { APP_CONFIG } from '../../platform/config/config.module.js';
import { OpenBankingClient } from './open-banking.client.js';
import { UpstreamTransport } from '../http/upstream-transport.js';

export const OPEN_BANKING_TRANSPORT = Symbol('OPEN_BANKING_TRANSPORT');

/** One client per upstream API, each over its own mTLS transport. */
@Module({
  providers: [
    {
      provide: OPEN_BANKING_TRANSPORT,
      inject: [APP_CONFIG, ClientCredentials],
      useFactory: (config: AppConfig, credentials: ClientCredentials) => {
        const baseUrl = config.upstream.openBankingBaseUrl;
        if (!baseUrl)
          throw new Error(
            'the open-banking upstream address is not resolved (UPSTREAM_OB_BASE_URL, or the sandbox)',
          );
        return new UpstreamTransport({
          name: 'open-banking',
          baseUrl,
          tls: { current: () => credentials.current() },
          connectTimeoutMs: config.upstream.connectTimeoutMs,
          headersTimeoutMs: config.upstream.headersTimeoutMs,
          bodyTimeoutMs: config.upstream.bodyTimeoutMs,
          poolConnections: config.upstream.poolConnections,
          keepAliveTimeoutMs: config.upstream.keepAliveTimeoutMs,
        });
      },
    },
    {
      provide: OpenBankingClient,
      inject: [OPEN_BANKING_TRANSPORT],
      useFactory: (transport: UpstreamTransport) => new OpenBankingClient(transport),
    },
  ],
  exports: [OpenBankingClient, OPEN_BANKING_TRANSPORT],
})
export class UpstreamModule implements OnApplicationShutdown {
  constructor(@Inject(OPEN_BANKING_TRANSPORT) private readonly transport: UpstreamTransport) {}

  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}
