import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import { ValidationFailedException } from '../platform/errors/to-problem.js';
import { SecretsService } from '../platform/secrets/secrets.service.js';
import { isUuid } from '../shared/uuid.js';
import type {
  CreateWebhookEndpointRequest,
  DeliveryCounts,
  WebhookEventDetail,
  WebhookEventPage,
  WebhookEventsQuery,
  WebhookEventView,
  WebhookPayload,
} from './dto/webhook.dto.js';
import { WebhookOutboxService } from './webhook-outbox.service.js';
import { sealWebhookSecret } from './webhook-secrets.js';
import { newWebhookSecret } from './webhook-signature.js';
import { webhookUrlRefusal } from './webhook-url-policy.js';
import type { WebhookEventType } from './webhook-event-types.js';
import {
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
  type DeliveryStatus,
} from './webhook.entities.js';

const notFound = (what: string, id: string) =>
  new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail: `No ${what} ${id}`,
  });

/** An endpoint as created or rotated: with its signing secret, shown this once. */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };

const EMPTY_COUNTS: DeliveryCounts = { pending: 0, delivered: 0, dead: 0, cancelled: 0 };

/** A tenant's webhook endpoints and its event log. Another tenant's endpoint or event is 404. */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: WebhookOutboxService,
    private readonly secrets: SecretsService,
  ) {}

  private get endpoints() {
    return this.dataSource.getRepository(WebhookEndpoint);
  }

  async createEndpoint(
    tenantId: string,
    request: CreateWebhookEndpointRequest,
  ): Promise<WebhookEndpointWithSecret> {
    const refusal = webhookUrlRefusal(request.url, this.config.mode);
    if (refusal) throw new ValidationFailedException([{ field: 'url', reason: refusal }]);
    const id = randomUUID();
    const secret = newWebhookSecret();
    const endpoint = this.endpoints.create({
      id,
      tenantId,
      url: request.url,
      eventTypes: [...new Set(request.eventTypes)],
      description: request.description ?? null,
      secretSealed: sealWebhookSecret(this.secrets, id, secret),
      previousSecretSealed: null,
      previousSecretExpiresAt: null,
      removedAt: null,
    });
    return Object.assign(await this.endpoints.save(endpoint), { secret });
  }

  listEndpoints(tenantId: string): Promise<WebhookEndpoint[]> {
    return this.endpoints
      .createQueryBuilder('e')
      .where('e.tenant_id = :tenantId AND e.removed_at IS NULL', { tenantId })
      .orderBy('e.created_at', 'ASC')
      .getMany();
  }

  async findEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(endpointId)
      ? await this.endpoints.findOne({ where: { id: endpointId, tenantId } })
      : null;
    if (!endpoint || endpoint.removedAt) throw notFound('webhook endpoint', endpointId);
    return endpoint;
  }

  /** Stops sending to the endpoint: its pending deliveries are cancelled; its past attempts stay. */
  async removeEndpoint(tenantId: string, endpointId: string): Promise<void> {
    const endpoint = await this.findEndpoint(tenantId, endpointId);
    await this.dataSource.transaction(async (manager) => {
      await manager.update(WebhookEndpoint, { id: endpoint.id }, { removedAt: new Date() });
      await manager.update(
        WebhookDelivery,
        { endpointId: endpoint.id, status: 'pending' },
        { status: 'cancelled', leaseUntil: null, leaseToken: null },
      );
    });
  }

  /**
   * Sends to the endpoint again now: its pause and back-off end, and what waits for it is due at once
   * (each delivery keeps its attempts; those dead-lettered are replayed one by one).
   */
  async resumeEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.findEndpoint(tenantId, endpointId);
    await this.dataSource.transaction(async (manager) => {
      await manager.update(
        WebhookEndpoint,
        { id: endpoint.id },
        { pausedAt: null, failingSince: null, consecutiveFailures: 0, retryAt: null },
      );
      await manager.query(
        `UPDATE webhook_deliveries SET next_attempt_at = now()
          WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at > now()`,
        [endpoint.id],
      );
    });
    return this.findEndpoint(tenantId, endpointId);
  }

  /** A new secret; the old one keeps signing (a second signature) for WEBHOOK_SECRET_GRACE_MS. */
  async rotateSecret(tenantId: string, endpointId: string): Promise<WebhookEndpointWithSecret> {
    const endpoint = await this.findEndpoint(tenantId, endpointId);
    const graceMs = this.config.webhooks.secretGraceMs;
    const secret = newWebhookSecret();
    endpoint.previousSecretSealed = graceMs > 0 ? endpoint.secretSealed : null;
    endpoint.previousSecretExpiresAt = graceMs > 0 ? new Date(Date.now() + graceMs) : null;
    endpoint.secretSealed = sealWebhookSecret(this.secrets, endpoint.id, secret);
    await this.endpoints.update(
      { id: endpoint.id },
      {
        secretSealed: endpoint.secretSealed,
        previousSecretSealed: endpoint.previousSecretSealed,
        previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
      },
    );
    return Object.assign(endpoint, { secret });
  }

  async listEvents(tenantId: string, query: WebhookEventsQuery): Promise<WebhookEventPage> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 50;
    const builder = this.dataSource
      .getRepository(WebhookEvent)
      .createQueryBuilder('v')
      .where('v.tenant_id = :tenantId', { tenantId });
    if (query.type) builder.andWhere('v.type = :type', { type: query.type });
    if (query.resourceId)
      builder.andWhere('v.resource_id = :resourceId', { resourceId: query.resourceId });
    if (query.createdFrom)
      builder.andWhere('v.created_at >= :from', { from: new Date(query.createdFrom) });
    if (query.createdTo) builder.andWhere('v.created_at < :to', { to: new Date(query.createdTo) });
    if (query.deliveryStatus)
      builder.andWhere(
        'EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id AND d.status = :deliveryStatus)',
        { deliveryStatus: query.deliveryStatus },
      );
    const [events, total] = await builder
      .orderBy('v.created_at', 'DESC')
      .addOrderBy('v.id', 'DESC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
    const counts = await this.deliveryCounts(events.map((event) => event.id));
    return {
      items: events.map((event) => this.view(event, counts.get(event.id))),
      page,
      pageSize,
      total,
    };
  }

  async findEvent(tenantId: string, eventId: string): Promise<WebhookEvent> {
    const event = isUuid(eventId)
      ? await this.dataSource
          .getRepository(WebhookEvent)
          .findOne({ where: { id: eventId, tenantId } })
      : null;
    if (!event) throw notFound('webhook event', eventId);
    return event;
  }

  async eventDetail(tenantId: string, eventId: string): Promise<WebhookEventDetail> {
    const event = await this.findEvent(tenantId, eventId);
    const deliveries = await this.dataSource
      .getRepository(WebhookDelivery)
      .find({ where: { eventId: event.id }, order: { createdAt: 'ASC' } });
    const attempts = await this.dataSource
      .getRepository(WebhookAttempt)
      .find({ where: { eventId: event.id }, order: { attempt: 'ASC' } });
    const counts = await this.deliveryCounts([event.id]);
    return {
      ...this.view(event, counts.get(event.id)),
      deliveryList: deliveries.map((delivery) => ({
        id: delivery.id,
        endpointId: delivery.endpointId,
        status: delivery.status,
        replay: delivery.replay,
        nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
        deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
        attempts: attempts
          .filter((attempt) => attempt.deliveryId === delivery.id)
          .map((attempt) => ({
            attempt: attempt.attempt,
            startedAt: attempt.startedAt.toISOString(),
            finishedAt: attempt.finishedAt?.toISOString() ?? null,
            outcome: attempt.outcome,
            responseStatus: attempt.responseStatus,
            latencyMs: attempt.latencyMs,
            error: attempt.error,
          })),
      })),
    };
  }

  /** Sends the event again (same webhook-id) to every endpoint now subscribed to its type. */
  async replay(tenantId: string, eventId: string): Promise<string[]> {
    const event = await this.findEvent(tenantId, eventId);
    const ids = await this.dataSource.transaction((manager) =>
      this.outbox.fanOut(manager, event.id, tenantId, event.type, true),
    );
    if (ids.length === 0)
      throw new ProblemException({
        status: 409,
        type: 'urn:portico:problem:webhooks:no-endpoint',
        title: 'No endpoint subscribed',
        detail: `No webhook endpoint of this tenant is subscribed to ${event.type}; register one first`,
      });
    return ids;
  }

  private view(event: WebhookEvent, counts: DeliveryCounts = EMPTY_COUNTS): WebhookEventView {
    return {
      id: event.id,
      type: event.type as WebhookEventType,
      resourceId: event.resourceId,
      createdAt: event.createdAt.toISOString(),
      payload: JSON.parse(event.body) as WebhookPayload,
      deliveries: counts,
    };
  }

  private async deliveryCounts(eventIds: string[]): Promise<Map<string, DeliveryCounts>> {
    const result = new Map<string, DeliveryCounts>();
    if (eventIds.length === 0) return result;
    const rows = (await this.dataSource.query(
      `SELECT event_id, status, count(*)::int AS n FROM webhook_deliveries
        WHERE event_id = ANY($1::uuid[]) GROUP BY event_id, status`,
      [eventIds],
    )) as { event_id: string; status: DeliveryStatus; n: number }[];
    for (const row of rows) {
      const counts = result.get(row.event_id) ?? { ...EMPTY_COUNTS };
      counts[row.status] = row.n;
      result.set(row.event_id, counts);
    }
    return result;
  }
}
