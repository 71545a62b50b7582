import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { JsonObject } from '../platform/common/json.js';
import {
  StatusTransitionListeners,
  type StatusTransition,
  type TransitionWrites,
} from '../audit/trail/status-transition-listeners.js';
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

/** The live endpoints of the tenant `tenant` subscribed to the type `type` (SQL expressions), as `e`. */
const subscribedEndpoints = (tenant: string, type: string) =>
  `webhook_endpoints e
    WHERE e.tenant_id = ${tenant} AND e.removed_at IS NULL AND e.event_types @> jsonb_build_array(${type})`;

/**
 * The transactional outbox: records an event, and a pending delivery to each endpoint of the tenant that
 * subscribed to its type, in the very transaction (or statement) of the change it reports (both commit
 * or neither). The delivery worker sends them later.
 */
@Injectable()
export class WebhookOutboxService {
  constructor(transitions: StatusTransitionListeners) {
    // Every status change the trail writes gets its event, in the change's own statement.
    transitions.subscribe({ writes: (transition, first) => this.statusChanged(transition, first) });
  }

  /** Returns the event's id, or undefined when its dedupe key was recorded before. */
  async record(manager: EntityManager, event: OutboxEvent): Promise<string | undefined> {
    const id = randomUUID();
    // TypeORM answers an INSERT … RETURNING with the rows.
    const inserted = (await manager.query(
      `INSERT INTO webhook_events (id, tenant_id, type, resource_id, body, dedupe_key)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
      [id, event.tenantId, event.type, event.resourceId, bodyOf(event), event.dedupeKey ?? null],
    )) as { id: string }[];
    if (inserted.length === 0) return undefined;
    await this.fanOut(manager, id, event.tenantId, event.type, false);
    return id;
  }

  /**
   * The event of a consent's or payment's status change (not of its creation, which the app made), and
   * its deliveries: CTEs of the change's statement, reading its `changed` row. A provider resource is
   * named by the provider's id (pmt_…, ref_…) and its merchant reference, as the change leaves them.
   */
  private statusChanged(
    { subject, fromStatus, toStatus, cause, resource }: StatusTransition,
    first: number,
  ): TransitionWrites | undefined {
    const event = STATUS_CHANGE_EVENTS[subject.kind];
    if (!event) return undefined;
    const named: JsonObject = event.cardResource
      ? {
          [event.idField]: resource.token ?? subject.id,
          porticoId: subject.id,
          merchantRef: resource.merchantRef ?? null,
          ...event.detail?.(resource.data ?? null),
        }
      : { [event.idField]: subject.id };
    const data = { ...named, previousStatus: fromStatus, status: toStatus, cause };
    const [id, type, body] = [0, 1, 2].map((offset) => `$${first + offset}`);
    return {
      ctes: [
        `outbox_event AS (
           INSERT INTO webhook_events (id, tenant_id, type, resource_id, body)
           SELECT ${id}::uuid, tenant_id, ${type}::varchar, id, ${body}::text FROM changed
           RETURNING id, tenant_id, type)`,
        `outbox_deliveries AS (
           INSERT INTO webhook_deliveries (event_id, endpoint_id, tenant_id, status, next_attempt_at, replay)
           SELECT ev.id, e.id, e.tenant_id, 'pending', now(), false
             FROM outbox_event ev, ${subscribedEndpoints('ev.tenant_id', 'ev.type::text')})`,
      ],
      params: [randomUUID(), event.type, bodyOf({ type: event.type, data })],
    };
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
       SELECT $1, e.id, e.tenant_id, 'pending', now(), $4 FROM ${subscribedEndpoints('$2', '$3::text')}
       RETURNING id`,
      [eventId, tenantId, type, replay],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }
}

/** An event's body as it is signed and sent. */
function bodyOf(event: Pick<OutboxEvent, 'type' | 'data'>): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date().toISOString(),
    data: event.data,
  });
}
