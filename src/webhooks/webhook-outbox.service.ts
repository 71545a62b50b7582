import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { JsonObject } from '../platform/common/json.js';
import type { SubjectKind } from '../audit/trail/status-change.entity.js';
import { StatusTransitionListeners } from '../audit/trail/status-transition-listeners.js';
import { STATUS_CHANGE_EVENTS, type WebhookEventType } from './webhook-event-types.js';

export interface OutboxEvent {
  tenantId: string;
  type: WebhookEventType;
  /** The Portico id of the resource the event is about (for the app's filters). */
  resourceId: string | null;
  data: JsonObject;
  /** An event that must exist once only: a second record with the same key writes nothing. */
  dedupeKey?: string;
}

/**
 * The transactional outbox: records an event, and a pending delivery to each endpoint of the tenant that
 * subscribed to its type, with the caller's entity manager, so in the very transaction of the change it
 * reports (both commit or neither). The delivery worker sends them later.
 */
@Injectable()
export class WebhookOutboxService {
  constructor(transitions: StatusTransitionListeners) {
    // Every status change the trail writes gets its event, in the change's own transaction.
    transitions.subscribe((manager, { subject, fromStatus, toStatus, cause }) =>
      this.statusChanged(manager, subject, fromStatus, toStatus, cause),
    );
  }

  /** Returns the event's id, or undefined when its dedupe key was recorded before. */
  async record(manager: EntityManager, event: OutboxEvent): Promise<string | undefined> {
    const id = randomUUID();
    const body = JSON.stringify({
      type: event.type,
      timestamp: new Date().toISOString(),
      data: event.data,
    });
    // TypeORM answers an INSERT … RETURNING with the rows.
    const inserted = (await manager.query(
      `INSERT INTO webhook_events (id, tenant_id, type, resource_id, body, dedupe_key)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
      [id, event.tenantId, event.type, event.resourceId, body, event.dedupeKey ?? null],
    )) as { id: string }[];
    if (inserted.length === 0) return undefined;
    await this.fanOut(manager, id, event.tenantId, event.type, false);
    return id;
  }

  /** The event of a consent's or payment's status change (not of its creation, which the app made). */
  async statusChanged(
    manager: EntityManager,
    subject: { kind: SubjectKind; id: string; tenantId: string },
    fromStatus: string,
    toStatus: string,
    cause: string,
  ): Promise<void> {
    const event = STATUS_CHANGE_EVENTS[subject.kind];
    if (!event) return;
    let id: string = subject.id;
    let extra: JsonObject = {};
    if (event.cardResource) {
      const [row] = (await manager.query(
        'SELECT token, merchant_ref, data FROM provider_resources WHERE id = $1',
        [subject.id],
      )) as { token: string | null; merchant_ref: string | null; data: JsonObject | null }[];
      id = row?.token ?? subject.id;
      extra = {
        porticoId: subject.id,
        merchantRef: row?.merchant_ref ?? null,
        ...event.detail?.(row?.data ?? null),
      };
    }
    await this.record(manager, {
      tenantId: subject.tenantId,
      type: event.type,
      resourceId: subject.id,
      data: {
        [event.idField]: id,
        ...extra,
        previousStatus: fromStatus,
        status: toStatus,
        cause,
      },
    });
  }

  /** A pending delivery of the event to each live endpoint of the tenant subscribed to the type. */
  async fanOut(
    manager: EntityManager,
    eventId: string,
    tenantId: string,
    type: string,
    replay: boolean,
  ): Promise<string[]> {
    const rows = (await manager.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, tenant_id, status, next_attempt_at, replay)
       SELECT $1, e.id, e.tenant_id, 'pending', now(), $4 FROM webhook_endpoints e
        WHERE e.tenant_id = $2 AND e.removed_at IS NULL AND e.event_types @> jsonb_build_array($3::text)
       RETURNING id`,
      [eventId, tenantId, type, replay],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }
}
