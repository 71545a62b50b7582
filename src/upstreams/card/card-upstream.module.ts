import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { CardCredentialsModule } from '#src/access/merchant-credentials/card-credentials.module.js';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { TRACER } from '#src/platform/tracing/tracing.module.js';
import type { Tracer } from '#src/platform/tracing/tracer.js';
import { UpstreamCaller } from '../http/upstream-caller.js';
import { reachabilityProbe, upstreamReadinessCheck } from '../http/upstream-readiness.js';
import { ReadinessRegistry } from '#src/platform/health/readiness-registry.js';
import { UpstreamTransport } from '../http/upstream-transport.js';
import { parseCardError } from './card-errors.js';
import { cardContract } from './card-schemas.js';
import { CardClient } from './card.client.js';

export const CARD_TRANSPORT = Symbol('CARD_TRANSPORT');
export const CARD_PAYFORM_TRANSPORT = Symbol('CARD_PAYFORM_TRANSPORT');

/** A transport to one of the card provider's hosts (server TLS: the merchant is known by its key). */
function cardTransport(config: AppConfig, name: string, baseUrl: string): UpstreamTransport {
  const { caFile } = config.upstreams.card;
  const caPath =
    caFile ?? (config.mode === 'sandbox' ? join(config.sandbox.certsDir, 'ca.pem') : undefined);
  const ca = caPath ? readFileSync(caPath) : undefined;
  return new UpstreamTransport({
    name,
    baseUrl,
    // No CA file: the system's.
    tls: { current: () => ({ ca: ca as Buffer, version: 0 }) },
    ...config.upstreams.card.http,
  });
}

/** The card upstream: its TLS transport, its contract and its typed client (Basic auth per merchant). */
@Module({
  imports: [CardCredentialsModule],
  providers: [
    {
      provide: CARD_TRANSPORT,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        const { baseUrl } = config.upstreams.card;
        return baseUrl ? cardTransport(config, 'card', baseUrl) : undefined;
      },
    },
    {
      provide: CARD_PAYFORM_TRANSPORT,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        const { payformUrl, baseUrl } = config.upstreams.card;
        return payformUrl && payformUrl !== baseUrl
          ? cardTransport(config, 'card-payform', payformUrl)
          : undefined;
      },
    },
    {
      provide: CardClient,
      inject: [
        CARD_TRANSPORT,
        APP_CONFIG,
        LOGGER,
        Metrics,
        CardCredentialsService,
        CARD_PAYFORM_TRANSPORT,
        TRACER,
      ],
      useFactory: (
        transport: UpstreamTransport | undefined,
        config: AppConfig,
        logger: Logger,
        metrics: Metrics,
        credentials: CardCredentialsService,
        payformTransport: UpstreamTransport | undefined,
        tracer: Tracer,
      ) => {
        const { http } = config.upstreams.card;
        const caller = new UpstreamCaller(
          { name: 'card', displayName: 'the card provider', parseErrorBody: parseCardError },
          { deadlineMs: http.deadlineMs, retryDelaysMs: http.retryDelaysMs, breaker: http.breaker },
          logger,
          metrics,
          tracer,
        );
        const keyOf = async (tenantId: string, publicKey: boolean) => {
          const keys = await credentials.keysOf(tenantId);
          if (!publicKey) return keys.secretKey;
          if (keys.publicKey) return keys.publicKey;
          throw new ProblemException({
            status: 409,
            type: PROBLEM_TYPES.conflict,
            title: 'Conflict',
            detail: 'This tenant has no public card key; an operator sets it',
          });
        };
        return new CardClient(
          transport,
          cardContract,
          caller,
          keyOf,
          (operation, problems) => {
            metrics.recordContractMismatch('card', operation);
            logger.warn({ upstream: 'card', operation, problems }, 'answer breaks the contract');
          },
          payformTransport,
        );
      },
    },
  ],
  exports: [CardClient],
})
export class CardUpstreamModule implements OnApplicationShutdown {
  constructor(
    @Inject(CARD_TRANSPORT) private readonly transport: UpstreamTransport | undefined,
    @Inject(CARD_PAYFORM_TRANSPORT) private readonly payform: UpstreamTransport | undefined,
    readiness: ReadinessRegistry,
  ) {
    if (transport)
      readiness.register('cardUpstream', upstreamReadinessCheck(reachabilityProbe(transport)));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.transport?.close(), this.payform?.close()]);
  }
}
