import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { WebhookDeliveryWorker } from '#src/webhooks/webhook-delivery.worker.js';
import { WebhookOutboxService } from '#src/webhooks/webhook-outbox.service.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { Receiver } from './receiver.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Event Order',
  cvv: '123',
};

interface Event {
  type: string;
  timestamp: string;
  sequence: number;
  data: Record<string, unknown>;
}

describe('webhook events an app can order: a sequence per resource, the time of the change, one id scheme', () => {
  let gateway: TestGateway;
  let database: OwnDatabase;
  let receiver: Receiver;
  let worker: WebhookDeliveryWorker;

  beforeAll(async () => {
    database = await ownDatabase('evo');
    // A failed attempt is retried an hour later: the test moves that hour on by hand.
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      WEBHOOK_RETRY_SCHEDULE_MS: '3600000',
      WEBHOOK_RETRY_JITTER_PERCENT: '0',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    worker = gateway.app.get(WebhookDeliveryWorker);
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
    await database.drop();
  });

  const call = (key: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    gateway.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

  async function tenantWithEndpoint(eventTypes: string[]) {
    const { key, tenantId } = await gateway.newTenantWithKey('app');
    const endpoint = await call(key, 'POST', '/v1/webhooks/endpoints', {
      url: receiver.url,
      eventTypes,
    });
    expect(endpoint.statusCode).toBe(201);
    return { key, tenantId, endpointId: endpoint.json<{ id: string }>().id };
  }

  /** The events the receiver acknowledged (2xx), in the order they arrived. */
  const acknowledged = (filter: (event: Event) => boolean) =>
    receiver.received
      .filter((request) => request.answered === 200)
      .map((request) => JSON.parse(request.body) as Event)
      .filter(filter);

  it('numbers the events of a resource 1, 2, 3, so an app that receives them out of order (a failed first delivery retried after the later ones) orders them and drops the stale one', async () => {
    const { key, endpointId } = await tenantWithEndpoint(['card_payment.status_changed']);
    const created = await call(key, 'POST', '/v1/card/payments', {
      amount: 3000,
      capture: 0,
      ...CARD,
    });
    expect(created.statusCode).toBe(201);
    const paymentId = created.json<{ token: string }>().token;
    const ofPayment = (event: Event) => event.data.paymentId === paymentId;

    // The first event's first delivery fails: it is due again in an hour.
    receiver.behaviour = (request) => (request.body.includes(paymentId) ? 500 : 200);
    await worker.drain();
    receiver.behaviour = () => 200;
    expect(receiver.received.filter((r) => r.body.includes(paymentId))).toHaveLength(1);

    expect((await call(key, 'POST', `/v1/card/payments/${paymentId}/capture`)).statusCode).toBe(
      200,
    );
    expect(
      (await call(key, 'POST', '/v1/card/refunds', { payment: paymentId, amount: 1000 }))
        .statusCode,
    ).toBe(201);
    // The endpoint's own back-off is over; the first event's retry is not due yet.
    await gateway.dataSource.query(`UPDATE webhook_endpoints SET retry_at = NULL WHERE id = $1`, [
      endpointId,
    ]);
    await worker.drain();
    // An hour later the first event's retry is due, and delivered after the two later events.
    await gateway.dataSource.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1 AND status = 'pending'`,
      [endpointId],
    );
    await gateway.dataSource.query(`UPDATE webhook_endpoints SET retry_at = NULL WHERE id = $1`, [
      endpointId,
    ]);
    await worker.drain();

    const arrived = acknowledged(ofPayment);
    expect(arrived.map((event) => [event.sequence, event.data.status])).toEqual([
      [2, 'Captured'],
      [3, 'Partially Refunded'],
      [1, 'Pre Authorized'],
    ]);
    // Ordered by sequence, the changes read as they were made, each dated by its change.
    const ordered = [...arrived].sort((a, b) => a.sequence - b.sequence);
    expect(ordered.map((event) => [event.data.previousStatus, event.data.status])).toEqual([
      ['creating', 'Pre Authorized'],
      ['Pre Authorized', 'Captured'],
      ['Captured', 'Partially Refunded'],
    ]);
    const times = ordered.map((event) => event.timestamp);
    for (const time of times) expect(time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect([...times].sort()).toEqual(times);
    // The time is the change's: the status history's own time for it.
    const history = (await gateway.dataSource.query(
      `SELECT to_status, changed_at FROM status_changes
        WHERE subject_id = $1 AND from_status IS NOT NULL ORDER BY id`,
      [ordered[0].data.porticoId],
    )) as { to_status: string; changed_at: Date }[];
    expect(history.map((change) => change.changed_at.toISOString())).toEqual(times);

    // An app that keeps the highest sequence handled drops the late first event: its status stays right.
    const handled = new Map<string, { sequence: number; status: unknown }>();
    for (const event of arrived) {
      const seen = handled.get(String(event.data.paymentId));
      if (seen && seen.sequence >= event.sequence) continue;
      handled.set(String(event.data.paymentId), {
        sequence: event.sequence,
        status: event.data.status,
      });
    }
    expect(handled.get(paymentId)).toEqual({ sequence: 3, status: 'Partially Refunded' });
    const read = await call(key, 'GET', `/v1/card/payments/${paymentId}`);
    expect(read.json()).toMatchObject({ status: 'Partially Refunded' });
  });

  it('sends no status_changed event for an update that keeps the status (Captured → Captured), and numbers the next change on', async () => {
    const { key, tenantId } = await tenantWithEndpoint(['card_payment.status_changed']);
    const created = await call(key, 'POST', '/v1/card/payments', { amount: 1500, ...CARD });
    expect(created.json()).toMatchObject({ status: 'Captured' });
    const paymentId = created.json<{ token: string }>().token;
    const updated = await call(key, 'PUT', `/v1/card/payments/${paymentId}`, {
      description: 'Order 7 (gift)',
    });
    expect(updated.statusCode).toBe(200);
    const events = async () =>
      (
        (await gateway.dataSource.query(
          `SELECT body FROM webhook_events WHERE tenant_id = $1 AND provider_id = $2 ORDER BY sequence`,
          [tenantId, paymentId],
        )) as { body: string }[]
      ).map((row) => JSON.parse(row.body) as Event);
    expect((await events()).map((event) => [event.sequence, event.data.status])).toEqual([
      [1, 'Captured'],
    ]);
    // The update is in the history all the same.
    const [{ touched }] = await gateway.dataSource.query(
      `SELECT count(*)::int AS touched FROM status_changes s JOIN provider_resources r ON r.id = s.subject_id
        WHERE r.token = $1 AND s.from_status = s.to_status`,
      [paymentId],
    );
    expect(touched).toBe(1);
    expect(
      (await call(key, 'POST', '/v1/card/refunds', { payment: paymentId, amount: 1500 }))
        .statusCode,
    ).toBe(201);
    expect((await events()).map((event) => [event.sequence, event.data.status])).toEqual([
      [1, 'Captured'],
      [2, 'Refunded'],
    ]);
  });

  it("names a card payment by the provider's id or null, never Portico's id, in every event; the event log carries and finds both", async () => {
    const { key, tenantId } = await tenantWithEndpoint(['card_payment.status_changed']);
    const declined = await call(key, 'POST', '/v1/card/payments', {
      amount: 1200,
      ...CARD,
      cardNumber: '4000000000009995',
    });
    expect(declined.statusCode).toBe(402);
    const [failed] = (await gateway.dataSource.query(
      `SELECT id FROM provider_resources WHERE tenant_id = $1 AND kind = 'payment' AND status = 'failed'`,
      [tenantId],
    )) as { id: string }[];
    const paid = await call(key, 'POST', '/v1/card/payments', { amount: 1300, ...CARD });
    const paymentId = paid.json<{ token: string }>().token;

    const log = await call(key, 'GET', '/v1/webhooks/events?type=card_payment.status_changed');
    const items = log.json<{
      items: {
        id: string;
        resourceId: string;
        providerId: string | null;
        sequence: number;
        payload: Event;
      }[];
    }>().items;
    expect(items).toHaveLength(2);
    const refused = items.find((item) => item.resourceId === failed.id)!;
    expect(refused).toMatchObject({ providerId: null, sequence: 1 });
    expect(refused.payload.data).toMatchObject({
      paymentId: null,
      porticoId: failed.id,
      previousStatus: 'creating',
      status: 'failed',
    });
    const made = items.find((item) => item.providerId === paymentId)!;
    expect(made.payload.data).toMatchObject({ paymentId, porticoId: made.resourceId });
    // Every event of the type carries the same names.
    for (const item of items)
      expect(Object.keys(item.payload.data).sort()).toEqual(
        ['cause', 'merchantRef', 'paymentId', 'porticoId', 'previousStatus', 'status'].sort(),
      );

    // The log finds a resource's events by either id.
    for (const id of [paymentId, made.resourceId]) {
      const found = await call(key, 'GET', `/v1/webhooks/events?resourceId=${id}`);
      expect(found.statusCode).toBe(200);
      expect(found.json<{ items: { id: string }[] }>().items.map((item) => item.id)).toEqual([
        made.id,
      ]);
    }
    const malformed = await call(key, 'GET', '/v1/webhooks/events?resourceId=pmt%20x');
    expect(malformed.statusCode).toBe(400);
  });

  it('numbers concurrent events of one resource without a gap or a repeat', async () => {
    const { tenantId } = await gateway.newTenantWithKey('app');
    const outbox = gateway.app.get(WebhookOutboxService);
    const resourceId = randomUUID();
    await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        gateway.dataSource.transaction((manager) =>
          outbox.record(manager, {
            tenantId,
            type: 'webhook_endpoint.paused',
            resourceId,
            data: { endpointId: resourceId, status: 'paused', index },
          }),
        ),
      ),
    );
    const rows = (await gateway.dataSource.query(
      `SELECT sequence, body FROM webhook_events WHERE resource_id = $1 ORDER BY created_at, sequence`,
      [resourceId],
    )) as { sequence: number; body: string }[];
    expect(rows.map((row) => row.sequence).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, index) => index + 1),
    );
    for (const row of rows) expect((JSON.parse(row.body) as Event).sequence).toBe(row.sequence);
  });
});
