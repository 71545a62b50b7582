import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { nextAttemptDelayMs } from './webhook-retry.js';
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
  ) {}

  async delivered(manager: EntityManager, endpointId: string): Promise<void> {
    // Written only when there is something to clear: a healthy endpoint's row is not rewritten per event.
    await manager.query(
      `UPDATE webhook_endpoints SET failing_since = NULL, consecutive_failures = 0, retry_at = NULL
        WHERE id = $1 AND (failing_since IS NOT NULL OR consecutive_failures > 0 OR retry_at IS NOT NULL)`,
      [endpointId],
    );
  }

  async failed(
    manager: EntityManager,
    endpointId: string,
    result: Pick<SendResult, 'retryAfterMs'>,
  ): Promise<void> {
    const { retryScheduleMs, jitterPercent, pauseAfterMs } = this.config.webhooks;
    const [current] = (await manager.query(
      'SELECT consecutive_failures FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE',
      [endpointId],
    )) as { consecutive_failures: number }[];
    if (!current) return;
    const failures = current.consecutive_failures + 1;
    const delayMs = nextAttemptDelayMs(failures, result, retryScheduleMs, jitterPercent);
    const [[row]] = (await manager.query(
      `UPDATE webhook_endpoints
          SET consecutive_failures = $2,
              failing_since = coalesce(failing_since, now()),
              retry_at = now() + make_interval(secs => $3::double precision / 1000),
              paused_at = CASE WHEN paused_at IS NULL AND removed_at IS NULL
                                AND failing_since <= now() - make_interval(secs => $4::double precision / 1000)
                               THEN now() ELSE paused_at END
        WHERE id = $1
        RETURNING tenant_id, failing_since, paused_at, paused_at = now() AS paused_now`,
      [endpointId, failures, delayMs, pauseAfterMs],
    )) as [
      { tenant_id: string; failing_since: Date; paused_at: Date | null; paused_now: boolean }[],
      number,
    ];
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
