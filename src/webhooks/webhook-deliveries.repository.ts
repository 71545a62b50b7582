import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { isUuid } from '../shared/uuid.js';
import type { WebhookEventsQuery } from './dto/webhook.dto.js';
import type { ClaimCandidate, ClaimedDelivery } from './webhook-claim.js';
import {
  WebhookAttempt,
  WebhookDelivery,
  WebhookEvent,
  type AttemptOutcome,
  type DeliveryStatus,
} from './webhook.entities.js';

/** What an attempt sends: the event's body and the endpoint's address and sealed secrets. */
export interface AttemptTarget {
  body: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_valid: boolean | null;
}

/** How an attempt ended, as its row records it. */
export interface AttemptRecord {
  outcome: AttemptOutcome;
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
}

/**
 * The SQL of the event log and its deliveries (tables `webhook_events`, `webhook_deliveries`,
 * `webhook_attempts`): the worker's claim under a lease, each attempt's record, and the tenant's reads.
 * The `manager` methods run in the caller's transaction (`transaction`).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * The backlog for the metrics: deliveries pending (to live endpoints, due or waiting for a retry),
   * the oldest one's age, and the endpoints paused.
   */
  async backlog(): Promise<{ pending: number; oldestSeconds: number; pausedEndpoints: number }> {
    const [row] = (await this.dataSource.query(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS pending,
              (SELECT extract(epoch FROM now() - min(created_at))::float8
                 FROM webhook_deliveries WHERE status = 'pending') AS oldest_seconds,
              (SELECT count(*) FROM webhook_endpoints
                WHERE paused_at IS NOT NULL AND removed_at IS NULL) AS paused`,
    )) as { pending: string; oldest_seconds: number | null; paused: string }[];
    return {
      pending: Number(row!.pending),
      oldestSeconds: row!.oldest_seconds ?? 0,
      pausedEndpoints: Number(row!.paused),
    };
  }

  /** Dead-letters the deliveries whose last allowed attempt's worker died (lease expired); returns their ids. */
  async deadLetterAbandoned(manager: EntityManager, maxAttempts: number): Promise<string[]> {
    const [dead] = (await manager.query(
      `UPDATE webhook_deliveries SET status = 'dead', lease_until = NULL, lease_token = NULL
          WHERE id IN (SELECT id FROM webhook_deliveries
                        WHERE lease_token IS NOT NULL AND status = 'pending' AND attempts >= $1
                          AND lease_until < now()
                        FOR UPDATE SKIP LOCKED)
          RETURNING id`,
      [maxAttempts],
    )) as [{ id: string }[], number];
    return dead.map((row) => row.id);
  }

  /**
   * The endpoints with a delivery due, locked for this claim (another replica skips them), least recently
   * served first, tenants taking turns: each tenant's least recently served endpoint, then each one's
   * second, and so on. Paused endpoints and those backing off are not due.
   */
  async dueEndpoints(
    manager: EntityManager,
    maxAttempts: number,
    limit: number,
  ): Promise<ClaimCandidate[]> {
    const rows = (await manager.query(
      `WITH due AS (
       SELECT e.id, e.last_claimed_at,
              row_number() OVER (PARTITION BY e.tenant_id ORDER BY e.last_claimed_at NULLS FIRST, e.id) AS turn
         FROM webhook_endpoints e
        WHERE e.removed_at IS NULL AND e.paused_at IS NULL
          AND (e.retry_at IS NULL OR e.retry_at <= now())
          AND EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now()
                         AND d.attempts < $1 AND (d.lease_until IS NULL OR d.lease_until < now())))
     SELECT e.id, e.tenant_id, e.failing_since IS NOT NULL AS failing,
            (SELECT count(*) FROM webhook_deliveries b
              WHERE b.endpoint_id = e.id AND b.lease_token IS NOT NULL AND b.lease_until >= now())::int AS busy
       FROM due JOIN webhook_endpoints e ON e.id = due.id
      ORDER BY due.turn, due.last_claimed_at NULLS FIRST, e.id
      LIMIT $2
      FOR NO KEY UPDATE OF e SKIP LOCKED`,
      [maxAttempts, limit],
    )) as { id: string; tenant_id: string; failing: boolean; busy: number }[];
    return rows.map((row) => ({
      endpointId: row.id,
      tenantId: row.tenant_id,
      failing: row.failing,
      busy: row.busy,
    }));
  }

  /**
   * Leases due deliveries: per endpoint at most `shares[i]`, and never more in flight than `caps[i]`
   * (counted again here, now that the endpoint is locked: another replica's claim may have committed
   * since the candidates were read). Oldest due first within an endpoint. Marks the endpoints served.
   */
  async lease(
    manager: EntityManager,
    endpoints: { endpointIds: string[]; shares: number[]; caps: number[] },
    options: { maxAttempts: number; leaseMs: number; leaseToken: string },
  ): Promise<ClaimedDelivery[]> {
    const [rows] = (await manager.query(
      `UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1,
            lease_until = now() + make_interval(secs => $5::double precision / 1000),
            lease_token = $6
      WHERE d.id IN (
        SELECT c.id FROM unnest($1::uuid[], $2::int[], $3::int[]) AS q(endpoint_id, n, cap)
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS busy FROM webhook_deliveries b
           WHERE b.endpoint_id = q.endpoint_id AND b.lease_token IS NOT NULL AND b.lease_until >= now()) f
        CROSS JOIN LATERAL (
          SELECT x.id FROM webhook_deliveries x
           WHERE x.endpoint_id = q.endpoint_id AND x.status = 'pending' AND x.next_attempt_at <= now()
             AND x.attempts < $4 AND (x.lease_until IS NULL OR x.lease_until < now())
           ORDER BY x.next_attempt_at
           LIMIT greatest(0, least(q.n, q.cap - f.busy))
           FOR UPDATE SKIP LOCKED) c)
      RETURNING d.id, d.event_id, d.endpoint_id, d.tenant_id, d.attempts`,
      [
        endpoints.endpointIds,
        endpoints.shares,
        endpoints.caps,
        options.maxAttempts,
        options.leaseMs,
        options.leaseToken,
      ],
    )) as [
      { id: string; event_id: string; endpoint_id: string; tenant_id: string; attempts: number }[],
      number,
    ];
    if (rows.length > 0)
      await manager.query(
        'UPDATE webhook_endpoints SET last_claimed_at = now() WHERE id = ANY($1::uuid[])',
        [[...new Set(rows.map((row) => row.endpoint_id))]],
      );
    return rows.map((row) => ({
      deliveryId: row.id,
      eventId: row.event_id,
      endpointId: row.endpoint_id,
      tenantId: row.tenant_id,
      attempt: row.attempts,
    }));
  }

  /** Records the attempts a dead worker left in flight on these deliveries as lease-expired; returns how many. */
  async expireOpenAttempts(manager: EntityManager, deliveryIds: string[]): Promise<number> {
    const [, expired] = (await manager.query(
      `UPDATE webhook_attempts SET outcome = 'lease-expired', finished_at = now(),
                  error = 'the worker stopped before the attempt finished (lease expired)'
            WHERE delivery_id = ANY($1::uuid[]) AND outcome IS NULL`,
      [deliveryIds],
    )) as [unknown, number];
    return expired;
  }

  /**
   * The row of an attempt starting now on `worker`. Dated by the clock, not by the claim's transaction:
   * the claim counted the attempts in flight after its transaction began, so an attempt that finished
   * meanwhile must not look as if it overlapped this one.
   */
  async startAttempt(
    manager: EntityManager,
    claimed: ClaimedDelivery,
    worker: string,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO webhook_attempts (delivery_id, event_id, endpoint_id, attempt, worker, started_at)
           VALUES ($1, $2, $3, $4, $5, clock_timestamp())`,
      [claimed.deliveryId, claimed.eventId, claimed.endpointId, claimed.attempt, worker],
    );
  }

  async target(eventId: string, endpointId: string): Promise<AttemptTarget> {
    const [target] = (await this.dataSource.query(
      `SELECT v.body, e.url, e.secret_sealed, e.previous_secret_sealed,
              (e.previous_secret_expires_at > now()) AS previous_valid
         FROM webhook_events v, webhook_endpoints e WHERE v.id = $1 AND e.id = $2`,
      [eventId, endpointId],
    )) as AttemptTarget[];
    return target;
  }

  /**
   * Writes how the attempt ended (once: an attempt already finished keeps its record), dated by the clock
   * (after the caller locked the endpoint), as its start is.
   */
  async finishAttempt(
    manager: EntityManager,
    deliveryId: string,
    attempt: number,
    record: AttemptRecord,
  ): Promise<void> {
    await manager.query(
      `UPDATE webhook_attempts SET outcome = $3, finished_at = clock_timestamp(), response_status = $4,
                latency_ms = $5, error = $6
          WHERE delivery_id = $1 AND attempt = $2 AND outcome IS NULL`,
      [deliveryId, attempt, record.outcome, record.responseStatus, record.latencyMs, record.error],
    );
  }

  /**
   * Ends the lease with the delivery's next state (the next attempt `delayMs` from now when pending);
   * false when the lease is no longer this one's (it expired and another worker took the delivery).
   */
  async settle(
    manager: EntityManager,
    deliveryId: string,
    leaseToken: string,
    next: DeliveryStatus,
    delayMs: number,
  ): Promise<boolean> {
    const [, affected] = (await manager.query(
      `UPDATE webhook_deliveries
            SET status = $3::varchar, lease_until = NULL, lease_token = NULL,
                delivered_at = CASE WHEN $3::varchar = 'delivered' THEN now() ELSE delivered_at END,
                next_attempt_at = now() + make_interval(secs => $4::double precision / 1000)
          WHERE id = $1 AND lease_token = $2`,
      [deliveryId, leaseToken, next, delayMs],
    )) as [unknown, number];
    return affected === 1;
  }

  /** A page of a tenant's events, newest first, with the total matching the filters. */
  listEvents(
    tenantId: string,
    query: WebhookEventsQuery,
    page: number,
    pageSize: number,
  ): Promise<[WebhookEvent[], number]> {
    const builder = this.dataSource
      .getRepository(WebhookEvent)
      .createQueryBuilder('v')
      .where('v.tenant_id = :tenantId', { tenantId });
    if (query.type) builder.andWhere('v.type = :type', { type: query.type });
    if (query.resourceId)
      builder.andWhere(
        isUuid(query.resourceId)
          ? '(v.resource_id = :resourceId OR v.provider_id = :providerId)'
          : 'v.provider_id = :providerId',
        { resourceId: query.resourceId, providerId: query.resourceId },
      );
    if (query.createdFrom)
      builder.andWhere('v.created_at >= :from', { from: new Date(query.createdFrom) });
    if (query.createdTo) builder.andWhere('v.created_at < :to', { to: new Date(query.createdTo) });
    if (query.deliveryStatus)
      builder.andWhere(
        'EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id AND d.status = :deliveryStatus)',
        { deliveryStatus: query.deliveryStatus },
      );
    return builder
      .orderBy('v.created_at', 'DESC')
      .addOrderBy('v.id', 'DESC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
  }

  findEvent(tenantId: string, eventId: string): Promise<WebhookEvent | null> {
    return this.dataSource
      .getRepository(WebhookEvent)
      .findOne({ where: { id: eventId, tenantId } });
  }

  /** The event's deliveries, oldest first. */
  deliveriesOf(eventId: string): Promise<WebhookDelivery[]> {
    return this.dataSource
      .getRepository(WebhookDelivery)
      .find({ where: { eventId }, order: { createdAt: 'ASC' } });
  }

  /** The event's attempts, in attempt order. */
  attemptsOf(eventId: string): Promise<WebhookAttempt[]> {
    return this.dataSource
      .getRepository(WebhookAttempt)
      .find({ where: { eventId }, order: { attempt: 'ASC' } });
  }

  /** How many deliveries of each event are in each state (states without one are absent). */
  async countByStatus(
    eventIds: string[],
  ): Promise<{ event_id: string; status: DeliveryStatus; n: number }[]> {
    return (await this.dataSource.query(
      `SELECT event_id, status, count(*)::int AS n FROM webhook_deliveries
        WHERE event_id = ANY($1::uuid[]) GROUP BY event_id, status`,
      [eventIds],
    )) as { event_id: string; status: DeliveryStatus; n: number }[];
  }
}
