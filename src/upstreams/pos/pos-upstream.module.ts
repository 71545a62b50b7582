import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { CardCredentialsModule } from '#src/access/merchant-credentials/card-credentials.module.js';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { TRACER } from '#src/platform/tracing/tracing.module.js';
import type { Tracer } from '#src/platform/tracing/tracer.js';
import { UpstreamCaller } from '../http/upstream-caller.js';
import { reachabilityProbe, upstreamReadinessCheck } from '../http/upstream-readiness.js';
import { ReadinessRegistry } from '#src/platform/health/readiness-registry.js';
import { UpstreamTransport } from '../http/upstream-transport.js';
import { parsePosError } from './pos-errors.js';
import { posContract } from './pos-schemas.js';
import { PosClient } from './pos.client.js';

export const POS_TRANSPORT = Symbol('POS_TRANSPORT');

/** The POS upstream: its TLS transport (a pool sized for payments held at terminals), contract and client. */
@Module({
  imports: [CardCredentialsModule],
  providers: [
    {
      provide: POS_TRANSPORT,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        const { baseUrl, caFile, http } = config.upstreams.pos;
        if (!baseUrl) return undefined;
        const caPath =
          caFile ??
          (config.mode === 'sandbox' ? join(config.sandbox.certsDir, 'ca.pem') : undefined);
        const ca = caPath ? readFileSync(caPath) : undefined;
        return new UpstreamTransport({
          name: 'pos',
          baseUrl,
          tls: { current: () => ({ ca: ca as Buffer, version: 0 }) },
          ...http,
        });
      },
    },
    {
      provide: PosClient,
      inject: [POS_TRANSPORT, APP_CONFIG, LOGGER, Metrics, CardCredentialsService, TRACER],
      useFactory: (
        transport: UpstreamTransport | undefined,
        config: AppConfig,
        logger: Logger,
        metrics: Metrics,
        credentials: CardCredentialsService,
        tracer: Tracer,
      ) => {
        const { http, paymentDeadlineMs } = config.upstreams.pos;
        const caller = new UpstreamCaller(
          { name: 'pos', displayName: 'the POS provider', parseErrorBody: parsePosError },
          {
            deadlineMs: http.deadlineMs,
            // Only the call that starts a payment (or void) waits for the terminal.
            operationDeadlinesMs: { createPosTransaction: paymentDeadlineMs },
            retryDelaysMs: http.retryDelaysMs,
            breaker: http.breaker,
          },
          logger,
          metrics,
          tracer,
        );
        const keyOf = async (tenantId: string) => {
          const { posKey } = await credentials.keysOf(tenantId);
          if (posKey) return posKey;
          throw new ProblemException({
            status: 409,
            type: 'urn:portico:problem:pos-key-missing',
            title: 'POS key missing',
            detail:
              'This tenant has no POS key at the provider; an operator sets it (PUT /v1/tenants/{tenantId}/card-credentials, posKey)',
          });
        };
        return new PosClient(transport, posContract, caller, keyOf, (operation, problems) => {
          metrics.recordContractMismatch('pos', operation);
          logger.warn({ upstream: 'pos', operation, problems }, 'answer breaks the contract');
        });
      },
    },
  ],
  exports: [PosClient],
})
export class PosUpstreamModule implements OnApplicationShutdown {
  constructor(
    @Inject(POS_TRANSPORT) private readonly transport: UpstreamTransport | undefined,
    readiness: ReadinessRegistry,
  ) {
    if (transport)
      readiness.register('posUpstream', upstreamReadinessCheck(reachabilityProbe(transport)));
  }

  /**
   * Payments held at terminals would keep a shutdown waiting for minutes: they are cut, their rows stay
   * in doubt, and the resolver reads them at the provider by transaction_id.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.transport?.destroy();
  }
}
