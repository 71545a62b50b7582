import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import { ValidationFailedException } from '../platform/errors/to-problem.js';
import { admittedToWrite } from '../platform/logging/request-context.js';
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
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { WebhookOutboxService } from './webhook-outbox.service.js';
import { openWebhookSecret, sealWebhookSecret } from './webhook-secrets.js';
import { newWebhookSecret } from './webhook-signature.js';
import { webhookUrlRefusal } from './webhook-url-policy.js';
import type { WebhookEventType } from './webhook-event-types.js';
import type { WebhookEndpoint, WebhookEvent } from './webhook.entities.js';

const notFound = (what: string, id: string) =>
  new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail: `No ${what} ${id}`,
  });

/** The facade path of an endpoint, which an Idempotency-Key of its creation is bound to. */
export const endpointPath = (endpointId: string) => `/v1/webhooks/endpoints/${endpointId}`;

/** An endpoint as created or rotated: with its signing secret, shown this once. */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };

const EMPTY_COUNTS: DeliveryCounts = { pending: 0, delivered: 0, dead: 0, cancelled: 0 };

/** A tenant's webhook endpoints and its event log. Another tenant's endpoint or event is 404. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: WebhookOutboxService,
    private readonly secrets: SecretsService,
  ) {}

  async createEndpoint(
    tenantId: string,
    request: CreateWebhookEndpointRequest,
  ): Promise<WebhookEndpointWithSecret> {
    const refusal = webhookUrlRefusal(request.url, this.config.mode);
    if (refusal) throw new ValidationFailedException([{ field: 'url', reason: refusal }]);
    const id = randomUUID();
    const secret = newWebhookSecret();
    // The request's rate-limit count, in flight since the guard (an @Idempotent route), before writing.
    await admittedToWrite();
    // With an Idempotency-Key, the key is bound to the endpoint in the transaction that writes it.
    const endpoint = await this.endpoints.insert(endpointPath(id), {
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
    return Object.assign(endpoint, { secret });
  }

  /** An endpoint with its secret, as its creation answered it (a repeat of an idempotent creation). */
  async endpointWithSecret(
    tenantId: string,
    endpointId: string,
  ): Promise<WebhookEndpointWithSecret> {
    const endpoint = await this.findEndpoint(tenantId, endpointId);
    return Object.assign(endpoint, {
      secret: openWebhookSecret(this.secrets, endpoint.id, endpoint.secretSealed),
    });
  }

  listEndpoints(tenantId: string): Promise<WebhookEndpoint[]> {
    return this.endpoints.listLive(tenantId);
  }

  async findEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(endpointId) ? await this.endpoints.find(tenantId, endpointId) : null;
    if (!endpoint || endpoint.removedAt) throw notFound('webhook endpoint', endpointId);
    return endpoint;
  }

  /** Stops sending to the endpoint: its pending deliveries are cancelled; its past attempts stay. */
  async removeEndpoint(tenantId: string, endpointId: string): Promise<void> {
    const endpoint = await this.findEndpoint(tenantId, endpointId);
    await this.endpoints.remove(endpoint.id);
  }

  /**
   * Sends to the endpoint again now: its pause and back-off end, and what waits for it is due at once
   * (each delivery keeps its attempts; those dead-lettered are replayed one by one).
   */
  async resumeEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.findEndpoint(tenantId, endpointId);
    await this.endpoints.resume(endpoint.id);
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
    await this.endpoints.updateSecrets(endpoint.id, endpoint);
    return Object.assign(endpoint, { secret });
  }

  async listEvents(tenantId: string, query: WebhookEventsQuery): Promise<WebhookEventPage> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 50;
    const [events, totalCount] = await this.deliveries.listEvents(tenantId, query, page, pageSize);
    const counts = await this.deliveryCounts(events.map((event) => event.id));
    return {
      items: events.map((event) => this.view(event, counts.get(event.id))),
      page,
      pageSize,
      totalCount,
    };
  }

  async findEvent(tenantId: string, eventId: string): Promise<WebhookEvent> {
    const event = isUuid(eventId) ? await this.deliveries.findEvent(tenantId, eventId) : null;
    if (!event) throw notFound('webhook event', eventId);
    return event;
  }

  async eventDetail(tenantId: string, eventId: string): Promise<WebhookEventDetail> {
    const event = await this.findEvent(tenantId, eventId);
    const deliveries = await this.deliveries.deliveriesOf(event.id);
    const attempts = await this.deliveries.attemptsOf(event.id);
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
    const ids = await this.deliveries.transaction((manager) =>
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
      providerId: event.providerId,
      sequence: event.sequence,
      createdAt: event.createdAt.toISOString(),
      payload: JSON.parse(event.body) as WebhookPayload,
      deliveries: counts,
    };
  }

  private async deliveryCounts(eventIds: string[]): Promise<Map<string, DeliveryCounts>> {
    const result = new Map<string, DeliveryCounts>();
    if (eventIds.length === 0) return result;
    for (const row of await this.deliveries.countByStatus(eventIds)) {
      const counts = result.get(row.event_id) ?? { ...EMPTY_COUNTS };
      counts[row.status] = row.n;
      result.set(row.event_id, counts);
    }
    return result;
  }
}
