import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { nextAttemptDelayMs } from './webhook-retry.js';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { WebhookOutboxService } from './webhook-outbox.service.js';
import type { SendResult } from './webhook-sender.js';

/**
 * An endpoint's own state across its deliveries: a failure makes it back off (none of its deliveries is
 * attempted before its retry_at, along the retry schedule by its consecutive failures), a delivery
 * clears that, and an endpoint failing for WEBHOOK_PAUSE_AFTER_MS is paused with a
 * `webhook_endpoint.paused` event, written in the same transaction.
 */
@Injectable()
export class WebhookEndpointHealth {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly outbox: WebhookOutboxService,
    private readonly endpoints: WebhookEndpointsRepository,
  ) {}

  /**
   * Locks the endpoint's health for the caller's transaction (an attempt's end; claims lock it too) and
   * answers its failures in a row, for `failed` (undefined: no such endpoint).
   */
  lock(manager: EntityManager, endpointId: string): Promise<number | undefined> {
    return this.endpoints.lockFailures(manager, endpointId);
  }

  async delivered(manager: EntityManager, endpointId: string): Promise<void> {
    await this.endpoints.clearFailures(manager, endpointId);
  }

  /** Counts a failure of the endpoint, whose `current` failures its `lock` answered in this transaction. */
  async failed(
    manager: EntityManager,
    endpointId: string,
    current: number | undefined,
    result: Pick<SendResult, 'retryAfterMs'>,
  ): Promise<void> {
    const { retryScheduleMs, jitterPercent, pauseAfterMs } = this.config.webhooks;
    if (current === undefined) return;
    const failures = current + 1;
    const delayMs = nextAttemptDelayMs(failures, result, retryScheduleMs, jitterPercent);
    const row = await this.endpoints.recordFailure(
      manager,
      endpointId,
      failures,
      delayMs,
      pauseAfterMs,
    );
    if (!row.paused_now) return;
    await this.outbox.record(manager, {
      tenantId: row.tenant_id,
      type: 'webhook_endpoint.paused',
      resourceId: endpointId,
      data: {
        endpointId,
        status: 'paused',
        failingSince: row.failing_since.toISOString(),
        pausedAt: row.paused_at!.toISOString(),
      },
    });
    this.logger.warn(
      { endpointId, tenantId: row.tenant_id, failingSince: row.failing_since, failures },
      'webhook endpoint paused: it has failed for WEBHOOK_PAUSE_AFTER_MS; its deliveries wait until it is resumed',
    );
  }
}
