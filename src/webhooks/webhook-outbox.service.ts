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
  /** The Portico id of the resource the event is about (for the app's filters; its events' sequence). */
  resourceId: string | null;
  /** The provider's id of that resource (pmt_…, ref_…, a POS transaction_id), for the event log's filters. */
  providerId?: string | null;
  data: JsonObject;
  /** An event that must exist once only: a second record with the same key writes nothing. */
  dedupeKey?: string;
}

/** The live endpoints of the tenant `tenant` subscribed to the type `type` (SQL expressions), as `e`. */
const subscribedEndpoints = (tenant: string, type: string) =>
  `webhook_endpoints e
    WHERE e.tenant_id = ${tenant} AND e.removed_at IS NULL AND e.event_types @> jsonb_build_array(${type})`;

/**
 * The next sequence number of each resource in `resources` (a relation with an `id` column), as the CTE
 * `outbox_sequence (resource_id, last)`: an upsert, so concurrent events of one resource wait for each
 * other and are numbered in commit order.
 */
const SEQUENCE_CTE = (resources: string) => `outbox_sequence AS (
    INSERT INTO webhook_event_sequences (resource_id, last)
    SELECT id, 1 FROM ${resources} r
    ON CONFLICT (resource_id) DO UPDATE SET last = webhook_event_sequences.last + 1
    RETURNING resource_id, last)`;

/**
 * An event's body as it is signed and sent, from its two parts around the change's time (the
 * transaction's, RFC 3339 in UTC with milliseconds, as the status history dates it) and its sequence.
 */
const BODY_SQL = (head: string, tail: string, sequence: string) =>
  `${head} || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","sequence":' ||
   coalesce(${sequence}::text, 'null') || ${tail}`;

/**
 * An event's body (minified JSON: `type`, `timestamp`, `sequence`, `data`) cut where the statement
 * writing it fills in the time and the sequence.
 */
function bodyParts(event: Pick<OutboxEvent, 'type' | 'data'>): { head: string; tail: string } {
  return {
    head: `{"type":${JSON.stringify(event.type)},"timestamp":"`,
    tail: `,"data":${JSON.stringify(event.data)}}`,
  };
}

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
    const { head, tail } = bodyParts(event);
    // The sequence is taken only for an event not recorded before (its dedupe key unseen).
    const inserted = (await manager.query(
      `WITH fresh AS (
         SELECT 1 WHERE $6::varchar IS NULL
            OR NOT EXISTS (SELECT 1 FROM webhook_events WHERE dedupe_key = $6::varchar)),
       ${SEQUENCE_CTE('(SELECT $4::uuid AS id FROM fresh WHERE $4::uuid IS NOT NULL)')}
       INSERT INTO webhook_events (id, tenant_id, type, resource_id, provider_id, sequence, body, dedupe_key)
       SELECT $1, $2, $3, $4, $5, s.last, ${BODY_SQL('$7', '$8', 's.last')}, $6
         FROM fresh LEFT JOIN outbox_sequence s ON true
       ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
      [
        id,
        event.tenantId,
        event.type,
        event.resourceId,
        event.providerId ?? null,
        event.dedupeKey ?? null,
        head,
        tail,
      ],
    )) as { id: string }[];
    if (inserted.length === 0) return undefined;
    await this.fanOut(manager, id, event.tenantId, event.type, false);
    return id;
  }

  /**
   * The event of a consent's or payment's status change (not of its creation, which the app made, nor of
   * an update that keeps the status), and its deliveries: CTEs of the change's statement, reading its
   * `changed` row. The resource's next sequence number is taken there, under the row lock of the change,
   * so a resource's events are numbered in the order its changes committed, whichever replica made them.
   * A provider resource is named by the provider's id (pmt_…, ref_…; null while it has none) beside
   * Portico's, and its merchant reference, as the change leaves them.
   */
  private statusChanged(
    { subject, fromStatus, toStatus, cause, resource }: StatusTransition,
    first: number,
  ): TransitionWrites | undefined {
    const event = STATUS_CHANGE_EVENTS[subject.kind];
    if (!event || fromStatus === toStatus) return undefined;
    const providerId = event.cardResource ? (resource.token ?? null) : null;
    const named: JsonObject = event.cardResource
      ? {
          [event.idField]: providerId,
          porticoId: subject.id,
          merchantRef: resource.merchantRef ?? null,
          ...event.detail?.(resource.data ?? null),
        }
      : { [event.idField]: subject.id };
    const data = { ...named, previousStatus: fromStatus, status: toStatus, cause };
    const { head, tail } = bodyParts({ type: event.type, data });
    const [id, type, provider, headParam, tailParam] = [0, 1, 2, 3, 4].map(
      (offset) => `$${first + offset}`,
    );
    return {
      ctes: [
        SEQUENCE_CTE('changed'),
        `outbox_event AS (
           INSERT INTO webhook_events (id, tenant_id, type, resource_id, provider_id, sequence, body)
           SELECT ${id}::uuid, c.tenant_id, ${type}::varchar, c.id, ${provider}::varchar, s.last,
                  ${BODY_SQL(`${headParam}::text`, `${tailParam}::text`, 's.last')}
             FROM changed c JOIN outbox_sequence s ON s.resource_id = c.id
           RETURNING id, tenant_id, type)`,
        `outbox_deliveries AS (
           INSERT INTO webhook_deliveries (event_id, endpoint_id, tenant_id, status, next_attempt_at, replay)
           SELECT ev.id, e.id, e.tenant_id, 'pending', now(), false
             FROM outbox_event ev, ${subscribedEndpoints('ev.tenant_id', 'ev.type::text')})`,
      ],
      params: [randomUUID(), event.type, providerId, head, tail],
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
