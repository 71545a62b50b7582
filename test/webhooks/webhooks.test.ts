import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { consentRequest, domesticPayment, inDays } from '../support/fixtures.js';
import { runProcess } from '../support/processes.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import {
  WebhookDeliveryWorker,
  nextAttemptDelayMs,
  retryDelayMs,
} from '#src/webhooks/webhook-delivery.worker.js';
import { retryAfterMs, sendWebhook } from '#src/webhooks/webhook-sender.js';
import { ConsentRenewalDueJob } from '#src/open-banking/consents/consent-renewal-due.job.js';
import { StatusHistoryService } from '#src/audit/trail/status-history.service.js';
import { Consent } from '#src/open-banking/consents/consent.entity.js';
import { webhookUrlRefusal } from '#src/webhooks/webhook-url-policy.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { Receiver, verifyStandardWebhook } from './receiver.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { sampleValue } from '../support/prometheus.js';

const MAX_ATTEMPTS = 5;

interface Endpoint {
  id: string;
  secret: string;
  url: string;
  eventTypes: string[];
}

describe('signed webhooks to apps', () => {
  let gateway: TestGateway;
  let database: OwnDatabase;
  let receiver: Receiver;
  let worker: WebhookDeliveryWorker;

  beforeAll(async () => {
    database = await ownDatabase('wh');
    // The worker is driven by the tests (drain), with no pause between retries: no sleeps.
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      WEBHOOK_RETRY_SCHEDULE_MS: '0',
      WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RENEWAL_DUE_DAYS: '14',
    });
    worker = gateway.app.get(WebhookDeliveryWorker);
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
    await database.drop();
  });

  const call = (
    key: string,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: Record<string, unknown>,
  ) =>
    gateway.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { payload } : {}),
    });

  async function register(key: string, eventTypes: string[], url = receiver.url) {
    const answer = await call(key, 'POST', '/v1/webhooks/endpoints', { url, eventTypes });
    expect(answer.statusCode).toBe(201);
    return answer.json<Endpoint>();
  }

  /** Creates a consent and answers the id of the event that reports it. */
  async function newConsentEvent(key: string): Promise<string> {
    const created = await call(key, 'POST', '/v1/consents', consentRequest() as never);
    const [{ id }] = await gateway.dataSource.query(
      `SELECT id FROM webhook_events WHERE resource_id = $1`,
      [created.json<{ consentId: string }>().consentId],
    );
    return id as string;
  }

  /** Requests to the receiver carrying one event id. */
  const requestsFor = (eventId: string) =>
    receiver.received.filter((r) => r.headers['webhook-id'] === eventId);

  it('registers an endpoint through the API, shows its secret once, and refuses bad URLs and event types', async () => {
    const { key } = await gateway.newTenantWithKey('admin');
    const endpoint = await register(key, ['consent.status_changed', 'card_refund.status_changed']);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(endpoint.secret.slice(6), 'base64')).toHaveLength(32);

    const listed = await call(key, 'GET', '/v1/webhooks/endpoints');
    expect(listed.json().items).toEqual([
      expect.objectContaining({ id: endpoint.id, url: receiver.url }),
    ]);
    expect(listed.body).not.toContain(endpoint.secret);
    const one = await call(key, 'GET', `/v1/webhooks/endpoints/${endpoint.id}`);
    expect(one.json()).not.toHaveProperty('secret');

    const ftp = await call(key, 'POST', '/v1/webhooks/endpoints', {
      url: 'ftp://example.com/x',
      eventTypes: ['consent.status_changed'],
    });
    expect(ftp.statusCode).toBe(400);
    expect(ftp.json().errors).toEqual([expect.objectContaining({ field: 'url' })]);
    const unknownType = await call(key, 'POST', '/v1/webhooks/endpoints', {
      url: receiver.url,
      eventTypes: ['consent.created'],
    });
    expect(unknownType.statusCode).toBe(400);
    expect(unknownType.json().errors[0].field).toMatch(/^eventTypes/);

    const auditor = await gateway.newTenantWithKey('auditor');
    expect((await call(auditor.key, 'GET', '/v1/webhooks/endpoints')).statusCode).toBe(403);
  });

  it('keeps signing secrets sealed at rest, and still signs with a secret stored before sealing', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const endpoint = await register(key, ['consent.status_changed']);
    const [row] = await gateway.dataSource.query(
      `SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`,
      [endpoint.id],
    );
    expect(row.secret_sealed).toMatch(/^v1:/);
    expect(row.secret_sealed).not.toContain(endpoint.secret.slice('whsec_'.length, 20));

    const sendConsentEvent = async () => {
      const eventId = await newConsentEvent(key);
      await worker.drain();
      return requestsFor(eventId);
    };
    const [sealed] = await sendConsentEvent();
    expect(verifyStandardWebhook(endpoint.secret, sealed.headers, sealed.body)).toBe(true);

    // A row from before sealing holds the secret itself: it keeps working until the next rotation.
    const legacy = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    await gateway.dataSource.query(
      `UPDATE webhook_endpoints SET secret_sealed = $2 WHERE id = $1`,
      [endpoint.id, legacy],
    );
    const [plain] = await sendConsentEvent();
    expect(verifyStandardWebhook(legacy, plain.headers, plain.body)).toBe(true);
  });

  it('sends consent.status_changed for a consent approved through the real SCA flow, signed so that a Standard Webhooks verifier written from the spec accepts it', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const endpoint = await register(key, ['consent.status_changed']);
    const { consentId } = await approvedConsent(gateway, key);
    await worker.drain();

    const requests = receiver.received.filter((r) => r.body.includes(consentId));
    const bodies = requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies).toHaveLength(2);
    expect(bodies).toEqual(
      expect.arrayContaining([
        {
          type: 'consent.status_changed',
          timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          sequence: 1,
          data: {
            consentId,
            previousStatus: 'creating',
            status: 'received',
            cause: 'upstream-created',
          },
        },
        {
          type: 'consent.status_changed',
          timestamp: expect.any(String),
          sequence: 2,
          data: { consentId, previousStatus: 'received', status: 'valid', cause: 'sca-callback' },
        },
      ]),
    );
    for (const request of requests) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(verifyStandardWebhook(endpoint.secret, request.headers, request.body)).toBe(true);
      // A changed body, another id, or another secret does not verify.
      expect(verifyStandardWebhook(endpoint.secret, request.headers, `${request.body} `)).toBe(
        false,
      );
      expect(
        verifyStandardWebhook(
          endpoint.secret,
          { ...request.headers, 'webhook-id': 'another' },
          request.body,
        ),
      ).toBe(false);
      expect(
        verifyStandardWebhook(
          `whsec_${Buffer.alloc(32).toString('base64')}`,
          request.headers,
          request.body,
        ),
      ).toBe(false);
      // Never the user's reference, the bank's ids, SCA links or the secret.
      expect(request.body).not.toMatch(
        /customer-4711|scaRedirect|upstreamConsentId|whsec_|iban|HU\d{2}/i,
      );
    }

    const events = await call(key, 'GET', `/v1/webhooks/events?resourceId=${consentId}`);
    expect(events.json()).toMatchObject({ totalCount: 2 });
    expect(events.json().items[0].deliveries).toEqual({
      pending: 0,
      delivered: 1,
      dead: 0,
      cancelled: 0,
    });
  });

  it('sends payment.status_changed in the transaction of the payment status change', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    await register(key, ['payment.status_changed']);
    const created = await call(key, 'POST', '/v1/payments', domesticPayment() as never);
    expect(created.statusCode).toBe(201);
    const paymentId = created.json<{ paymentId: string }>().paymentId;
    await worker.drain();
    const events = receiver.events().filter((e) => e.data.paymentId === paymentId);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment.status_changed',
        data: expect.objectContaining({ paymentId, previousStatus: 'creating' }),
      }),
    ]);
    // The history row and the event are one: as many events as non-initial status changes.
    const [{ changes }] = await gateway.dataSource.query(
      `SELECT count(*)::int AS changes FROM status_changes WHERE subject_id = $1 AND from_status IS NOT NULL`,
      [paymentId],
    );
    const [{ outbox }] = await gateway.dataSource.query(
      `SELECT count(*)::int AS outbox FROM webhook_events WHERE resource_id = $1`,
      [paymentId],
    );
    expect(outbox).toBe(changes);
  });

  it('sends card_payment.status_changed and card_refund.status_changed named by the facade ids', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    await register(key, ['card_payment.status_changed', 'card_refund.status_changed']);
    const card = {
      cardNumber: '5217925525906273',
      expirationMonth: '12',
      expirationYear: '2030',
      holderName: 'Webhook Test',
      cvv: '123',
    };
    const created = await call(key, 'POST', '/v1/card/payments', {
      amount: 2000,
      capture: 0,
      merchantRef: 'webhook-card-1',
      ...card,
    });
    expect(created.statusCode).toBe(201);
    const paymentId = created.json<{ token: string }>().token;
    expect((await call(key, 'POST', `/v1/card/payments/${paymentId}/capture`)).statusCode).toBe(
      200,
    );
    const refund = await call(key, 'POST', '/v1/card/refunds', { payment: paymentId, amount: 500 });
    expect(refund.statusCode).toBe(201);
    const refundId = refund.json<{ token: string }>().token;
    await worker.drain();
    const statuses = receiver
      .events()
      .filter((e) => e.type === 'card_payment.status_changed' && e.data.paymentId === paymentId)
      .map((e) => [e.data.previousStatus, e.data.status]);
    // Deliveries run concurrently: the order of arrival is not the order of the changes.
    expect(statuses).toHaveLength(3);
    expect(statuses).toEqual(
      expect.arrayContaining([
        ['creating', 'Pre Authorized'],
        ['Pre Authorized', 'Captured'],
        ['Captured', 'Partially Refunded'],
      ]),
    );
    expect(
      receiver
        .events()
        .find((e) => e.type === 'card_payment.status_changed' && e.data.paymentId === paymentId)
        ?.data,
    ).toMatchObject({ merchantRef: 'webhook-card-1', porticoId: expect.any(String) });
    expect(
      receiver
        .events()
        .filter((e) => e.type === 'card_refund.status_changed' && e.data.refundId === refundId),
    ).toHaveLength(1);
  });

  it('writes the event in the transaction of the status change: none for a change rolled back or lost to another writer', async () => {
    const { key, tenantId } = await gateway.newTenantWithKey('app');
    const created = await call(key, 'POST', '/v1/consents', consentRequest() as never);
    const consentId = created.json<{ consentId: string }>().consentId;
    const history = gateway.app.get(StatusHistoryService);
    const events = async () =>
      (
        await gateway.dataSource.query(
          `SELECT body FROM webhook_events WHERE resource_id = $1 ORDER BY created_at`,
          [consentId],
        )
      ).map((row: { body: string }) => JSON.parse(row.body).data.status);
    expect(await events()).toEqual(['received']);

    // The change's statement fails (a cause longer than its column) with its history row and event
    // written in it: neither stays.
    const consents = { name: 'consents', entity: Consent };
    const current = { id: consentId, tenantId, status: 'received' } as Consent;
    await expect(
      history.transition(consents, 'consent', current, 'valid', 'x'.repeat(65)),
    ).rejects.toThrow();
    // Another writer changed the status first: the compare-and-set writes nothing.
    const stale = { id: consentId, tenantId, status: 'creating' } as Consent;
    expect(await history.transition(consents, 'consent', stale, 'failed', 'test')).toBe(false);
    expect(await events()).toEqual(['received']);

    expect(await history.transition(consents, 'consent', current, 'rejected', 'test')).toBe(true);
    expect(await events()).toEqual(['received', 'rejected']);
  });

  it('gets an event acknowledged once by a receiver that fails three times then succeeds, with four attempts recorded', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    await register(key, ['consent.status_changed']);
    const eventId = await newConsentEvent(key);
    receiver.behaviour = (request, seenBefore) =>
      request.headers['webhook-id'] === eventId && seenBefore < 3 ? 500 : 200;
    try {
      await worker.drain();
    } finally {
      receiver.behaviour = () => 200;
    }
    expect(requestsFor(eventId).map((r) => r.answered)).toEqual([500, 500, 500, 200]);
    // Every attempt of one event carries the same webhook-id and a fresh, valid signature.
    const detail = (await call(key, 'GET', `/v1/webhooks/events/${eventId}`)).json();
    expect(detail.deliveryList).toHaveLength(1);
    expect(detail.deliveryList[0]).toMatchObject({ status: 'delivered', replay: false });
    expect(detail.deliveryList[0].attempts).toEqual(
      [500, 500, 500, 200].map((status, i) =>
        expect.objectContaining({
          attempt: i + 1,
          outcome: status === 200 ? 'delivered' : 'failed',
          responseStatus: status,
          latencyMs: expect.any(Number),
          error: status === 200 ? null : 'answered 500',
        }),
      ),
    );
    // Nothing is left to send: a further pass delivers nothing more.
    expect(await worker.drain()).toBe(0);
    expect(requestsFor(eventId)).toHaveLength(4);
  });

  it('dead-letters a delivery after the maximum attempts, and a replay sends it again with the same webhook-id', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const endpoint = await register(key, ['consent.status_changed']);
    const eventId = await newConsentEvent(key);
    receiver.behaviour = (request) => (request.headers['webhook-id'] === eventId ? 503 : 200);
    try {
      await worker.drain();
    } finally {
      receiver.behaviour = () => 200;
    }
    expect(requestsFor(eventId)).toHaveLength(MAX_ATTEMPTS);
    const metrics = await gateway.app.get(Metrics).registry.metrics();
    expect(sampleValue(metrics, 'portico_webhook_attempts_total', { outcome: 'dead' })).toBe(1);
    expect(
      sampleValue(metrics, 'portico_webhook_attempts_total', { outcome: 'failed' }),
    ).toBeGreaterThanOrEqual(MAX_ATTEMPTS);
    const dead = (await call(key, 'GET', '/v1/webhooks/events?deliveryStatus=dead')).json();
    expect(dead.items.map((e: { id: string }) => e.id)).toEqual([eventId]);
    let detail = (await call(key, 'GET', `/v1/webhooks/events/${eventId}`)).json();
    expect(detail.deliveryList[0].status).toBe('dead');
    expect(detail.deliveryList[0].attempts).toHaveLength(MAX_ATTEMPTS);

    const replay = await call(key, 'POST', `/v1/webhooks/events/${eventId}/replay`);
    expect(replay.statusCode).toBe(202);
    expect(replay.json().deliveryIds).toHaveLength(1);
    await worker.drain();
    const last = requestsFor(eventId).at(-1)!;
    expect(last.answered).toBe(200);
    expect(verifyStandardWebhook(endpoint.secret, last.headers, last.body)).toBe(true);
    expect(last.body).toBe(requestsFor(eventId)[0].body);
    detail = (await call(key, 'GET', `/v1/webhooks/events/${eventId}`)).json();
    expect(
      detail.deliveryList.map((d: { status: string; replay: boolean }) => [d.status, d.replay]),
    ).toEqual([
      ['dead', false],
      ['delivered', true],
    ]);
    expect(detail.deliveries).toMatchObject({ dead: 1, delivered: 1 });
  });

  it('dead-letters a delivery at once when the receiver answers 410 Gone, without retrying it', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    await register(key, ['consent.status_changed']);
    const eventId = await newConsentEvent(key);
    receiver.behaviour = (request) => (request.headers['webhook-id'] === eventId ? 410 : 200);
    try {
      await worker.drain();
    } finally {
      receiver.behaviour = () => 200;
    }
    expect(requestsFor(eventId).map((r) => r.answered)).toEqual([410]);
    const detail = (await call(key, 'GET', `/v1/webhooks/events/${eventId}`)).json();
    expect(detail.deliveryList[0]).toMatchObject({ status: 'dead' });
    expect(detail.deliveryList[0].attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'failed', responseStatus: 410 }),
    ]);
  });

  it("waits as long as a receiver's Retry-After asks (seconds or a date), within the schedule's longest pause", async () => {
    receiver.answerHeaders = { 'retry-after': '120' };
    receiver.behaviour = () => 503;
    try {
      const answer = await sendWebhook(
        receiver.url,
        '{}',
        {},
        { timeoutMs: 2000, mode: 'sandbox' },
      );
      expect(answer).toMatchObject({ status: 503, retryAfterMs: 120_000 });
    } finally {
      receiver.answerHeaders = {};
      receiver.behaviour = () => 200;
    }
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(retryAfterMs('Mon, 23 Nov 2026 12:05:00 GMT', now)).toBe(300_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    const schedule = [5000, 30000, 600000];
    expect(nextAttemptDelayMs(1, {}, schedule, 0)).toBe(5000);
    expect(nextAttemptDelayMs(1, { retryAfterMs: 120_000 }, schedule, 0)).toBe(120_000);
    expect(nextAttemptDelayMs(3, { retryAfterMs: 1000 }, schedule, 0)).toBe(600_000);
    expect(nextAttemptDelayMs(1, { retryAfterMs: 86_400_000 }, schedule, 0)).toBe(600_000);
  });

  it('signs with both secrets during the grace period after a rotation, and with the new one only after it', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const endpoint = await register(key, ['consent.status_changed']);
    const rotated = await call(key, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json<Endpoint & { previousSecretExpiresAt: string }>();
    expect(fresh.secret).not.toBe(endpoint.secret);
    expect(new Date(fresh.previousSecretExpiresAt).getTime()).toBeGreaterThan(Date.now());

    const sendOne = async () => {
      const created = await call(key, 'POST', '/v1/consents', consentRequest() as never);
      const consentId = created.json<{ consentId: string }>().consentId;
      await worker.drain();
      return receiver.received.find((r) => r.body.includes(consentId))!;
    };
    const during = await sendOne();
    const signatures = String(during.headers['webhook-signature']).split(' ');
    expect(signatures).toEqual(Array(2).fill(expect.stringMatching(/^v1,/)));
    expect(verifyStandardWebhook(fresh.secret, during.headers, during.body)).toBe(true);
    expect(verifyStandardWebhook(endpoint.secret, during.headers, during.body)).toBe(true);

    // The grace period ends.
    await gateway.dataSource.query(
      `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
      [endpoint.id],
    );
    const after = await sendOne();
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyStandardWebhook(fresh.secret, after.headers, after.body)).toBe(true);
    expect(verifyStandardWebhook(endpoint.secret, after.headers, after.body)).toBe(false);
  });

  it("answers 404 for another tenant's endpoint and event, and lists only the caller's own", async () => {
    const owner = await gateway.newTenantWithKey('app');
    const other = await gateway.newTenantWithKey('admin');
    const endpoint = await register(owner.key, ['consent.status_changed']);
    const eventId = await newConsentEvent(owner.key);
    for (const [method, url] of [
      ['GET', `/v1/webhooks/endpoints/${endpoint.id}`],
      ['DELETE', `/v1/webhooks/endpoints/${endpoint.id}`],
      ['POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`],
      ['GET', `/v1/webhooks/events/${eventId}`],
      ['POST', `/v1/webhooks/events/${eventId}/replay`],
    ] as const) {
      const answer = await call(other.key, method, url);
      expect([url, answer.statusCode]).toEqual([url, 404]);
    }
    expect((await call(other.key, 'GET', '/v1/webhooks/endpoints')).json().items).toEqual([]);
    expect((await call(other.key, 'GET', '/v1/webhooks/events')).json()).toMatchObject({
      items: [],
      totalCount: 0,
    });
    // The owner's endpoint is untouched.
    expect((await call(owner.key, 'GET', `/v1/webhooks/endpoints/${endpoint.id}`)).statusCode).toBe(
      200,
    );
    await worker.drain();
  });

  it('filters and pages the event log, and a removed endpoint gets nothing more', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const endpoint = await register(key, ['consent.status_changed', 'payment.status_changed']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await call(key, 'POST', '/v1/consents', consentRequest() as never);
      ids.push(created.json<{ consentId: string }>().consentId);
    }
    await call(key, 'POST', '/v1/payments', domesticPayment() as never);
    const all = (await call(key, 'GET', '/v1/webhooks/events')).json();
    expect(all.totalCount).toBe(4);
    const consents = (
      await call(key, 'GET', '/v1/webhooks/events?type=consent.status_changed&pageSize=2&page=2')
    ).json();
    expect(consents).toMatchObject({ totalCount: 3, page: 2, pageSize: 2 });
    expect(consents.items).toHaveLength(1);
    // Newest first: page 2 of 2 holds the oldest consent's event.
    expect(consents.items[0].resourceId).toBe(ids[0]);
    expect(
      (await call(key, 'GET', '/v1/webhooks/events?deliveryStatus=pending')).json().totalCount,
    ).toBe(4);
    expect((await call(key, 'GET', '/v1/webhooks/events?type=nope')).statusCode).toBe(400);
    expect(
      (await call(key, 'GET', '/v1/webhooks/events?createdFrom=2999-01-01')).json().totalCount,
    ).toBe(0);

    expect((await call(key, 'DELETE', `/v1/webhooks/endpoints/${endpoint.id}`)).statusCode).toBe(
      204,
    );
    expect(
      (await call(key, 'GET', '/v1/webhooks/events?deliveryStatus=cancelled')).json().totalCount,
    ).toBe(4);
    const before = receiver.received.length;
    await worker.drain();
    expect(
      receiver.received.slice(before).filter((r) => ids.some((id) => r.body.includes(id))),
    ).toEqual([]);
    expect((await call(key, 'GET', `/v1/webhooks/endpoints/${endpoint.id}`)).statusCode).toBe(404);
  });

  it('sends consent.renewal_due once per consent and due date, however many replicas run the job at once', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    await register(key, ['consent.renewal_due']);
    const sca = await approvedConsent(gateway, key, { validUntil: inDays(120) });
    const ending = await approvedConsent(gateway, key, { validUntil: inDays(10) });
    const later = await approvedConsent(gateway, key, { validUntil: inDays(120) });
    // The first consent's last SCA was 170 days ago: its renewal is due in 10 days.
    await gateway.dataSource.query(
      `UPDATE consents SET last_sca_at = now() - interval '170 days' WHERE id = $1`,
      [sca.consentId],
    );
    const job = gateway.app.get(ConsentRenewalDueJob);
    const passes = await Promise.all([job.run(), job.run(), job.run()]);
    await job.run();
    expect(passes.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(2);
    await worker.drain();
    const due = receiver.events().filter((e) => e.type === 'consent.renewal_due');
    const about = (consentId: string) => due.filter((e) => e.data.consentId === consentId);
    expect(about(sca.consentId)).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ reason: 'sca-renewal', status: 'valid' }),
      }),
    ]);
    const scaDue = new Date(String(about(sca.consentId)[0].data.dueAt)).getTime();
    expect(Math.abs(scaDue - (Date.now() + 10 * 86_400_000))).toBeLessThan(3_600_000);
    expect(about(ending.consentId)).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ reason: 'valid-until', validUntil: inDays(10) }),
      }),
    ]);
    expect(about(later.consentId)).toEqual([]);
    // A fresh SCA moves the due date: a new warning is due only when the new date comes near.
    expect(await job.run()).toBe(0);
  });

  it('refuses, in production mode, endpoint URLs that are not https or that name local, link-local, private or metadata addresses', () => {
    for (const url of [
      'http://app.example.com/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://[fe80::1]/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://10.1.2.3/x',
      'https://[::ffff:169.254.169.254]/x',
      'https://metadata.google.internal/x',
      'https://user:pw@app.example.com/x',
    ])
      expect([url, webhookUrlRefusal(url, 'production')]).toEqual([url, expect.any(String)]);
    expect(webhookUrlRefusal('https://app.example.com/hooks', 'production')).toBeUndefined();
    expect(webhookUrlRefusal('https://203.0.113.7/hooks', 'production')).toBeUndefined();
    // Sandbox mode: an app under development on this machine.
    expect(webhookUrlRefusal('http://127.0.0.1:4000/hooks', 'sandbox')).toBeUndefined();
    expect(webhookUrlRefusal('file:///etc/passwd', 'sandbox')).toEqual(expect.any(String));
  });

  it('backs off along the configured schedule with bounded jitter, repeating the last pause', () => {
    const schedule = [5000, 30000, 120000];
    expect(retryDelayMs(1, schedule, 0)).toBe(5000);
    expect(retryDelayMs(3, schedule, 0)).toBe(120000);
    expect(retryDelayMs(9, schedule, 0)).toBe(120000);
    expect(retryDelayMs(2, schedule, 20, () => 0)).toBe(24000);
    expect(retryDelayMs(2, schedule, 20, () => 1)).toBe(36000);
  });

  it('manages endpoints with the CLI: add shows the secret once, list never, rotate-secret, remove', async () => {
    const { slug, key } = await gateway.newTenantWithKey('app');
    const env = { DATABASE_URL: database.url };
    const cli = (...args: string[]) => runProcess('dist/cli/main.js', args, env);
    const added = await cli(
      'webhook:add',
      slug,
      '--url',
      receiver.url,
      '--events',
      'consent.status_changed,payment.status_changed',
    );
    expect(added.code).toBe(0);
    const id = /registered webhook endpoint (\S+)/.exec(added.stdout)![1];
    const secret = /signing secret \(shown once, store it now\): (whsec_\S+)/.exec(
      added.stdout,
    )![1];
    const listed = await cli('webhook:list', slug);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(secret);
    const refused = await cli('webhook:add', slug, '--url', receiver.url, '--events', 'nope');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('eventTypes');

    const rotated = await cli('webhook:rotate-secret', slug, id);
    const fresh = /signing secret \(shown once, store it now\): (whsec_\S+)/.exec(
      rotated.stdout,
    )![1];
    expect(fresh).not.toBe(secret);
    expect(rotated.stdout).toContain('the previous secret also signs until');
    // What the CLI registered is what the API shows.
    const shown = (await call(key, 'GET', `/v1/webhooks/endpoints/${id}`)).json();
    expect(shown.eventTypes).toEqual(['consent.status_changed', 'payment.status_changed']);

    expect((await cli('webhook:remove', slug, id)).stdout).toContain(
      `removed webhook endpoint ${id}`,
    );
    expect((await call(key, 'GET', `/v1/webhooks/endpoints/${id}`)).statusCode).toBe(404);
    // Five CLI processes, each starting Nest: about 4 s apiece on a loaded machine.
  }, 120_000);
});
