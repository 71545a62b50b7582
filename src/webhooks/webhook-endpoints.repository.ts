import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { idempotentBindCte } from '../platform/idempotency/idempotency-binding.js';
import { WebhookDelivery, WebhookEndpoint } from './webhook.entities.js';

/** An endpoint's signing secrets as rotated. */
export type EndpointSecrets = Pick<
  WebhookEndpoint,
  'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'
>;

/** An endpoint after a failure was counted (recordFailure). */
export interface EndpointFailure {
  tenant_id: string;
  failing_since: Date;
  paused_at: Date | null;
  /** This failure paused it. */
  paused_now: boolean;
}

/**
 * The SQL of webhook endpoints (table `webhook_endpoints`): a tenant's endpoints and each one's health
 * (failures, back-off, pause). The `manager` methods run in the caller's transaction.
 */
@Injectable()
export class WebhookEndpointsRepository {
  constructor(
    @InjectRepository(WebhookEndpoint) private readonly rows: Repository<WebhookEndpoint>,
  ) {}

  /** Writes an endpoint, and binds the request's Idempotency-Key (if any) to `resource` in its transaction. */
  async insert(
    resource: string,
    endpoint: Omit<
      WebhookEndpoint,
      | 'createdAt'
      | 'failingSince'
      | 'consecutiveFailures'
      | 'retryAt'
      | 'pausedAt'
      | 'lastClaimedAt'
    >,
  ): Promise<WebhookEndpoint> {
    const bind = idempotentBindCte('bound', resource, 1);
    const saved = await this.rows.manager.transaction(async (manager) => {
      const row = await manager.save(this.rows.create(endpoint));
      if (bind) await manager.query(`WITH ${bind.cte} SELECT 1`, bind.params);
      return row;
    });
    bind?.written();
    return saved;
  }

  /** A tenant's endpoints not removed, oldest first. */
  listLive(tenantId: string): Promise<WebhookEndpoint[]> {
    return this.rows
      .createQueryBuilder('e')
      .where('e.tenant_id = :tenantId AND e.removed_at IS NULL', { tenantId })
      .orderBy('e.created_at', 'ASC')
      .getMany();
  }

  /** A tenant's endpoint, removed or not. */
  find(tenantId: string, endpointId: string): Promise<WebhookEndpoint | null> {
    return this.rows.findOne({ where: { id: endpointId, tenantId } });
  }

  /** Marks the endpoint removed and cancels its pending deliveries (one transaction). */
  async remove(endpointId: string): Promise<void> {
    await this.rows.manager.transaction(async (manager) => {
      // Locked first, as a claim locks it, and dated after the lock: an attempt a claim started before
      // this removal committed is dated before it.
      await this.lockFailures(manager, endpointId);
      await manager.query(
        'UPDATE webhook_endpoints SET removed_at = clock_timestamp() WHERE id = $1',
        [endpointId],
      );
      await manager.update(
        WebhookDelivery,
        { endpointId, status: 'pending' },
        { status: 'cancelled', leaseUntil: null, leaseToken: null },
      );
    });
  }

  /** Ends the endpoint's pause and back-off, and makes what waits for it due now (one transaction). */
  async resume(endpointId: string): Promise<void> {
    await this.rows.manager.transaction(async (manager) => {
      await manager.update(
        WebhookEndpoint,
        { id: endpointId },
        { pausedAt: null, failingSince: null, consecutiveFailures: 0, retryAt: null },
      );
      await manager.query(
        `UPDATE webhook_deliveries SET next_attempt_at = now()
          WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at > now()`,
        [endpointId],
      );
    });
  }

  async updateSecrets(endpointId: string, secrets: EndpointSecrets): Promise<void> {
    await this.rows.update(
      { id: endpointId },
      {
        secretSealed: secrets.secretSealed,
        previousSecretSealed: secrets.previousSecretSealed,
        previousSecretExpiresAt: secrets.previousSecretExpiresAt,
      },
    );
  }

  /** Clears the endpoint's failures, written only when there are some (a healthy row is not rewritten per event). */
  async clearFailures(manager: EntityManager, endpointId: string): Promise<void> {
    await manager.query(
      `UPDATE webhook_endpoints SET failing_since = NULL, consecutive_failures = 0, retry_at = NULL
        WHERE id = $1 AND (failing_since IS NOT NULL OR consecutive_failures > 0 OR retry_at IS NOT NULL)`,
      [endpointId],
    );
  }

  /** The endpoint's consecutive failures, its row locked until the transaction ends; undefined if it is gone. */
  async lockFailures(manager: EntityManager, endpointId: string): Promise<number | undefined> {
    const [current] = (await manager.query(
      'SELECT consecutive_failures FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE',
      [endpointId],
    )) as { consecutive_failures: number }[];
    return current?.consecutive_failures;
  }

  /**
   * Counts a failure: `failures` in a row, backing off `delayMs`; an endpoint failing for `pauseAfterMs`
   * or more is paused (paused_now).
   */
  async recordFailure(
    manager: EntityManager,
    endpointId: string,
    failures: number,
    delayMs: number,
    pauseAfterMs: number,
  ): Promise<EndpointFailure> {
    // The caller holds the endpoint's lock (lockFailures); a pause is dated by the clock after it, so
    // an attempt a claim started before this commits is dated before the pause.
    const [[row]] = (await manager.query(
      `WITH prior AS (SELECT paused_at FROM webhook_endpoints WHERE id = $1)
       UPDATE webhook_endpoints e
          SET consecutive_failures = $2,
              failing_since = coalesce(e.failing_since, now()),
              retry_at = now() + make_interval(secs => $3::double precision / 1000),
              paused_at = CASE WHEN e.paused_at IS NULL AND e.removed_at IS NULL
                                AND e.failing_since <= now() - make_interval(secs => $4::double precision / 1000)
                               THEN clock_timestamp() ELSE e.paused_at END
         FROM prior
        WHERE e.id = $1
        RETURNING e.tenant_id, e.failing_since, e.paused_at,
                  (prior.paused_at IS NULL AND e.paused_at IS NOT NULL) AS paused_now`,
      [endpointId, failures, delayMs, pauseAfterMs],
    )) as [EndpointFailure[], number];
    return row;
  }
}
