import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cardFields } from '../support/card-api.js';
import { page } from '../support/card-pages.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

type Notification = {
  token: string;
  status: string;
  paymentLinkUrl: string;
  payment: { token: string; status: string } | null;
  skipNotify: boolean;
};

describe('card facade: notifications (hosted payment links)', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  let other: { key: string };
  let auditor: { key: string };
  const REQUEST = {
    payeeName: 'Eleni Georgiou',
    payeeEmail: 'eleni@example.com',
    payeePhone: '+306900000001',
    amount: 2500,
    description: 'Invoice 42',
  };

  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
    other = await sut.newTenantWithKey('app');
    auditor = await sut.newTenantWithKey('auditor');
  });
  afterAll(() => sut.close());

  const call = async (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
    key = app.key,
    headers: Record<string, string> = {},
  ) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...headers },
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };

  it('creates, reads, lists and cancels in camelCase; another tenant sees none of it', async () => {
    const created = await call('POST', '/v1/card/notifications', { ...REQUEST, skipNotify: 1 });
    expect(created.status).toBe(201);
    const notification = created.body as Notification;
    expect(notification).toMatchObject({ status: 'Pending', skipNotify: true, payment: null });
    expect(notification.token).toMatch(/^pnt_/);
    expect((await call('GET', `/v1/card/notifications/${notification.token}`)).body).toMatchObject({
      token: notification.token,
    });
    const listed = await call('GET', '/v1/card/notifications?count=5');
    expect((listed.body.items as Notification[]).map((n) => n.token)).toContain(notification.token);
    expect(
      (await call('GET', `/v1/card/notifications/${notification.token}`, undefined, other.key))
        .status,
    ).toBe(404);
    expect(
      (await call('DELETE', `/v1/card/notifications/${notification.token}`, undefined, other.key))
        .status,
    ).toBe(404);
    const canceled = await call('DELETE', `/v1/card/notifications/${notification.token}`);
    expect(canceled.body.status).toBe('Canceled');
    const again = await call('DELETE', `/v1/card/notifications/${notification.token}`);
    expect(again.status).toBe(400);
    expect(again.body.upstream).toMatchObject({ code: '45001' });
  });

  it('names the field of a bad request (problem+json, never a 500)', async () => {
    const bad = await call('POST', '/v1/card/notifications', {
      ...REQUEST,
      description: 'x'.repeat(201),
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('description');
  });

  it("names the facade's own fields in its reasons, never the provider's", async () => {
    const { payeePhone: _omitted, ...withoutPhone } = REQUEST;
    const bad = await call('POST', '/v1/card/notifications', { ...withoutPhone, payeeName: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'payeePhone', reason: "must have required property 'payeePhone'" },
        { field: 'payeeName', reason: 'must be string' },
      ]),
    );
    expect(JSON.stringify(bad.body)).not.toMatch(/payee_/);
  });

  it('is created once per Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `notif-${Date.now()}` };
    const first = await call('POST', '/v1/card/notifications', REQUEST, app.key, headers);
    const second = await call('POST', '/v1/card/notifications', REQUEST, app.key, headers);
    expect(second.body.token).toBe(first.body.token);
  });

  it('once paid on the hosted page it is Paid through the facade, with its history in the audit trail and its event', async () => {
    const created = (await call('POST', '/v1/card/notifications', REQUEST)).body as Notification;
    expect((await page(created.paymentLinkUrl, cardFields())).status).toBe(200);
    const read = (await call('GET', `/v1/card/notifications/${created.token}`))
      .body as Notification;
    expect(read).toMatchObject({ status: 'Paid', payment: { status: 'Captured' } });

    const audit = await call(
      'GET',
      `/v1/audit/card-resources?kind=notification&tenantId=${app.tenantId}`,
      undefined,
      auditor.key,
    );
    const row = (audit.body.items as { id: string; token: string }[]).find(
      (item) => item.token === created.token,
    );
    expect(row).toBeDefined();
    const detail = await call('GET', `/v1/audit/card-resources/${row?.id}`, undefined, auditor.key);
    expect((detail.body.history as { to: string }[]).map((change) => change.to)).toEqual([
      'creating',
      'Pending',
      'Paid',
    ]);
    const events = (await sut.dataSource.query(
      "SELECT body FROM webhook_events WHERE type = 'notification.status_changed' AND tenant_id = $1",
      [app.tenantId],
    )) as { body: string }[];
    expect(
      events.map((event) => (JSON.parse(event.body) as { data: Record<string, unknown> }).data),
    ).toContainEqual(expect.objectContaining({ notificationId: created.token, status: 'Paid' }));
  });
});
