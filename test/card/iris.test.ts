import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { signIrisJson } from '#src/shared/iris/iris-hash.js';
import { formOf, page } from '../support/card-pages.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { freePort } from '../support/processes.js';

type Session = {
  id: string;
  token: string;
  status: string;
  paymentId: string | null;
  amount: number;
};
type Order = 'callback-webhook' | 'webhook-callback' | 'webhook-only';

/**
 * Portico as the merchant's server of the IRIS flow, against the sandbox's bank page, callback and
 * webhook: every arrival order, duplicated, and on two gateway processes at once, makes exactly one
 * payment at the provider (counted there) and one row in Portico; forged, replayed and unknown results
 * make nothing.
 */
describe('card facade: IRIS bank payments, paid exactly once whatever the arrival order', () => {
  let sut: TestGateway;
  let replica: TestGateway;
  let replicaUrl: string;
  let app: { tenantId: string; key: string };

  beforeAll(async () => {
    sut = await startTestGateway({}, [], { listen: true });
    // A second gateway process on the same database and provider, behind the same public address.
    replica = await startTestGateway(
      { PUBLIC_BASE_URL: sut.baseUrl, UPSTREAM_CARD_BASE_URL: sut.sandbox.cardUrl },
      [],
      { listen: true },
    );
    replicaUrl = `http://127.0.0.1:${(replica.app.getHttpServer().address() as AddressInfo).port}`;
    app = await sut.newTenantWithKey('app');
  });
  afterAll(async () => {
    await replica.close();
    await sut.close();
  });

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: bearer(app.key),
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };
  const control = (method: 'PUT' | 'POST', path: string, json: unknown = {}) =>
    request(`${sut.sandbox.scaUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(json),
    }).then((r) => r.body.text());
  /** Payments the provider made from a source (counted at the sandbox). */
  const paymentsAtProvider = (source: string) => {
    let count = 0;
    for (const id of sut.sandbox.card.merchantIds()) {
      const book = sut.sandbox.card.merchantBook(id);
      for (const payment of book?.payments.values() ?? [])
        if (payment.merchantRef === `iris-${source}`) count++;
    }
    return count;
  };
  const rowsInPortico = async (source: string) =>
    Number(
      (
        (await sut.dataSource.query(
          "SELECT count(*) AS n FROM provider_resources WHERE kind = 'payment' AND parent_token = $1 AND status <> 'failed'",
          [source],
        )) as { n: string }[]
      )[0].n,
    );

  /** A session through the app, its payment form, and the payer's approval at the bank page. */
  async function approved(order: Order, copies: number, amount = 1500) {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount,
      country: 'GR',
      md: 'cart-9',
      returnUrl: 'https://shop.example/done',
    });
    expect(created.status).toBe(201);
    const session = created.body as Session;
    await control('PUT', `/sandbox/card/iris/sessions/${session.token}/delivery`, {
      order,
      copies,
      holdMs: 60_000,
    });
    const payform = await call('POST', `/v1/card/iris/sessions/${session.id}/payform`);
    const form = formOf(payform.body.payload as string);
    expect((await page(form.action, form.fields)).status).toBe(200);
    const returned = await page(`${form.action}/decision`, { decision: 'approve' });
    return { session, html: returned.html };
  }

  /** The payer's browser posting the callback form (where it points, or to another process). */
  const postCallback = (html: string, base?: string) => {
    const { action, fields } = formOf(html);
    const url = base ? action.replace(sut.baseUrl, base) : action;
    return request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  };

  const settled = async (session: Session) => {
    // The webhook may still be on its way: poll the session as the app would.
    for (let i = 0; i < 100; i++) {
      const read = (await call('GET', `/v1/card/iris/sessions/${session.id}`)).body as Session;
      if (read.status === 'captured') return read;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return (await call('GET', `/v1/card/iris/sessions/${session.id}`)).body as Session;
  };

  const expectOnePayment = async (session: Session) => {
    const read = await settled(session);
    expect(read).toMatchObject({ status: 'captured', paymentId: expect.stringMatching(/^pmt_/) });
    expect(paymentsAtProvider(session.token)).toBe(1);
    expect(await rowsInPortico(session.token)).toBe(1);
    const payment = await call('GET', `/v1/card/payments/${read.paymentId}`);
    expect(payment.body).toMatchObject({ status: 'Captured', amount: session.amount, card: null });
  };

  it('creates the session with Portico as the merchant: src_ token, status created', async () => {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount: 2000,
      country: 'GR',
      returnUrl: 'https://shop.example/done',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      token: expect.stringMatching(/^src_/),
      status: 'created',
      amount: 2000,
      currency: 'EUR',
      paymentId: null,
    });
    const bad = await call('POST', '/v1/card/iris/sessions', { amount: 2000, country: 'Greece' });
    expect(bad.status).toBe(400);
  });

  it('callback then webhook: one payment, the browser sent to the return address with the outcome', async () => {
    const { session, html } = await approved('callback-webhook', 1);
    const callback = await postCallback(html);
    expect(callback.statusCode).toBe(303);
    const location = new URL(String(callback.headers.location));
    expect(location.origin + location.pathname).toBe('https://shop.example/done');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      irisSession: session.id,
      status: 'paid',
    });
    await control('POST', `/sandbox/card/iris/sessions/${session.token}/release`);
    await expectOnePayment(session);
    // The auditor sees the session's history and the payment; the app gets the session's events.
    const auditor = await sut.newTenantWithKey('auditor');
    const audit = async (url: string) =>
      (await sut.app.inject({ method: 'GET', url, headers: bearer(auditor.key) })).json() as {
        items: { id: string; token: string; kind: string }[];
        history: { to: string }[];
      };
    const rows = (await audit(`/v1/audit/card-resources?tenantId=${app.tenantId}`)).items;
    const sessionRow = rows.find((row) => row.id === session.id);
    const detail = await audit(`/v1/audit/card-resources/${sessionRow?.id}`);
    expect(detail.history.map((change) => change.to)).toEqual([
      'creating',
      'created',
      'initiated',
      'authorized',
      'captured',
    ]);
    const read = (await call('GET', `/v1/card/iris/sessions/${session.id}`)).body as Session;
    expect(rows).toContainEqual(
      expect.objectContaining({ kind: 'payment', token: read.paymentId }),
    );
    const events = (await sut.dataSource.query(
      "SELECT body FROM webhook_events WHERE type = 'iris_session.status_changed' AND tenant_id = $1",
      [app.tenantId],
    )) as { body: string }[];
    expect(
      events.map((event) => (JSON.parse(event.body) as { data: Record<string, unknown> }).data),
    ).toContainEqual(expect.objectContaining({ sessionId: session.token, status: 'captured' }));
  });

  it('webhook then callback: one payment; the callback replayed later at another process finds it', async () => {
    const { session, html } = await approved('webhook-callback', 1);
    expect((await postCallback(html)).statusCode).toBe(303);
    await expectOnePayment(session);
    // Another process (no memory of this session: as after a restart) gets the same callback again.
    const replayed = await postCallback(html, replicaUrl);
    expect(new URL(String(replayed.headers.location)).searchParams.get('status')).toBe('paid');
    await expectOnePayment(session);
  });

  it('webhook only (the payer never comes back): one payment', async () => {
    const { session, html } = await approved('webhook-only', 1);
    expect(html).not.toContain('<form');
    await expectOnePayment(session);
  });

  it.each<[Order]>([['callback-webhook'], ['webhook-callback'], ['webhook-only']])(
    '%s, each message three times: one payment, no 41001 surfaced',
    async (order) => {
      const { session, html } = await approved(order, 3);
      if (order !== 'webhook-only') {
        const answers = await Promise.all([
          postCallback(html),
          postCallback(html),
          postCallback(html),
        ]);
        for (const answer of answers) {
          expect(answer.statusCode).toBe(303);
          expect(String(answer.headers.location)).not.toContain('failed');
        }
      }
      if (order === 'callback-webhook')
        await control('POST', `/sandbox/card/iris/sessions/${session.token}/release`);
      await expectOnePayment(session);
    },
  );

  it('the callback and the webhook at two gateway processes at once: one payment', async () => {
    const { session, html } = await approved('callback-webhook', 2);
    const [toReplica, toFirst] = await Promise.all([
      postCallback(html, replicaUrl),
      postCallback(html),
      control('POST', `/sandbox/card/iris/sessions/${session.token}/release`),
    ]);
    expect(toReplica.statusCode).toBe(303);
    expect(toFirst.statusCode).toBe(303);
    await expectOnePayment(session);
  });

  it('a forged hash, a result replayed for another session and an unknown session create nothing', async () => {
    const { session, html } = await approved('callback-webhook', 1);
    const { action, fields } = formOf(html);
    const forgedJson = JSON.stringify({
      callback_url: action,
      token: session.token,
      md: 'cart-9',
      type: 'iris',
    });
    const forged = await request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...fields,
        hash: signIrisJson('sk_attacker', forgedJson),
      }).toString(),
    });
    expect(forged.statusCode).toBe(401);
    const altered = Buffer.from(fields.hash, 'base64').toString('utf8').replace('cart-9', 'cart-0');
    const alteredAnswer = await request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...fields,
        hash: Buffer.from(altered).toString('base64'),
      }).toString(),
    });
    expect(alteredAnswer.statusCode).toBe(401);
    // The genuine result of this session posted to another session's address.
    const other = await approved('callback-webhook', 1);
    const replayed = await request(formOf(other.html).action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    expect(replayed.statusCode).toBe(401);
    const unknown = await request(`${sut.baseUrl}/v1/card/iris/webhook/${'A'.repeat(43)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: session.token, md: 'cart-9', hash: fields.hash }),
    });
    expect(unknown.statusCode).toBe(404);
    expect(paymentsAtProvider(session.token)).toBe(0);
    expect(paymentsAtProvider(other.session.token)).toBe(0);
    expect(await rowsInPortico(session.token)).toBe(0);
    expect(sut.logs.filter((line) => line.includes('"security":"iris-'))).toHaveLength(4);
    expect(sut.logs.join('\n')).not.toContain(fields.hash);
  });

  it('a refusal at the bank fails the session and makes no payment', async () => {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount: 1500,
      country: 'GR',
      returnUrl: 'https://shop.example/done',
    });
    const session = created.body as Session;
    await control('PUT', `/sandbox/card/iris/sessions/${session.token}/delivery`, {
      order: 'webhook-callback',
    });
    const form = formOf(
      (await call('POST', `/v1/card/iris/sessions/${session.id}/payform`)).body.payload as string,
    );
    await page(form.action, form.fields);
    const returned = await page(`${form.action}/decision`, { decision: 'refuse' });
    const callback = await postCallback(returned.html);
    expect(new URL(String(callback.headers.location)).searchParams.get('status')).toBe('failed');
    expect((await call('GET', `/v1/card/iris/sessions/${session.id}`)).body.status).toBe('failed');
    expect(paymentsAtProvider(session.token)).toBe(0);
  });

  it("keeps a tenant's sessions from another tenant", async () => {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount: 1500,
      country: 'GR',
      returnUrl: 'https://shop.example/done',
    });
    const other = await sut.newTenantWithKey('app');
    const read = await sut.app.inject({
      method: 'GET',
      url: `/v1/card/iris/sessions/${(created.body as Session).id}`,
      headers: bearer(other.key),
    });
    expect(read.statusCode).toBe(404);
  });

  it('calls the payment form at its own host (UPSTREAM_CARD_PAYFORM_URL), the rest at the card API', async () => {
    // Nothing listens there (below the ephemeral range: no other test's socket takes it meanwhile).
    const closedPort = await freePort();
    const cardUrl = new URL(sut.sandbox.cardUrl);
    const gatewayWith = (payformUrl: string) =>
      startTestGateway({
        UPSTREAM_CARD_BASE_URL: sut.sandbox.cardUrl,
        UPSTREAM_CARD_PAYFORM_URL: payformUrl,
      });
    const payformThrough = async (gateway: TestGateway) => {
      const send = (method: 'POST', url: string, payload?: object) =>
        gateway.app.inject({
          method,
          url,
          headers: bearer(app.key),
          ...(payload ? { payload } : {}),
        });
      const created = await send('POST', '/v1/card/iris/sessions', {
        amount: 1500,
        country: 'GR',
        returnUrl: 'https://shop.example/done',
      });
      expect(created.statusCode).toBe(201);
      return send('POST', `/v1/card/iris/sessions/${created.json<Session>().id}/payform`);
    };
    // The payment form's host does not answer: the session (card API) is made, its form is not.
    const unreachable = await gatewayWith(`https://127.0.0.1:${closedPort}`);
    try {
      const answer = await payformThrough(unreachable);
      expect(answer.statusCode).toBeGreaterThanOrEqual(502);
      expect(answer.json().upstream).toMatchObject({ sent: false });
    } finally {
      await unreachable.close();
    }
    // The same sandbox under another name: the form comes from there.
    const elsewhere = await gatewayWith(`https://127.0.0.1:${cardUrl.port}`);
    try {
      const answer = await payformThrough(elsewhere);
      expect(answer.statusCode).toBe(200);
      expect(answer.json().payload).toContain('<form');
    } finally {
      await elsewhere.close();
    }
  });

  const payformCalls = async (sessionId: string) =>
    Number(
      (
        (await sut.dataSource.query(
          "SELECT count(*) AS n FROM access_log WHERE card_resource_id = $1 AND operation = 'createIrisPayform'",
          [sessionId],
        )) as { n: string }[]
      )[0].n,
    );
  const startSession = async () => {
    const created = await call('POST', '/v1/card/iris/sessions', {
      amount: 1500,
      country: 'GR',
      returnUrl: 'https://shop.example/done',
    });
    expect(created.status).toBe(201);
    return created.body as Session & { expiresAt: string };
  };

  it("expires an abandoned session on Portico's clock: read as expired, its form 410 without asking the provider", async () => {
    const session = await startSession();
    const lifetime = Date.parse(session.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(14 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
    const realNow = Date.now.bind(Date);
    // Portico's clock only (the sandbox reads its clock with new Date()): 15 minutes and a second on.
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 15 * 60_000 + 1_000);
    try {
      expect((await call('GET', `/v1/card/iris/sessions/${session.id}`)).body.status).toBe(
        'expired',
      );
      const payform = await call('POST', `/v1/card/iris/sessions/${session.id}/payform`);
      expect(payform.status).toBe(410);
      expect(payform.body).toMatchObject({
        type: 'urn:portico:problem:iris-session-expired',
        resource: `/v1/card/iris/sessions/${session.id}`,
        resourceStatus: 'expired',
        expiresAt: session.expiresAt,
      });
    } finally {
      spy.mockRestore();
    }
    expect(await payformCalls(session.id)).toBe(0);
  });

  it("learns the expiry from the provider's clock: its form 410 (not 400 80002 token), then read as expired", async () => {
    const session = await startSession();
    sut.sandbox.card.advanceClock(16 * 60);
    const payform = await call('POST', `/v1/card/iris/sessions/${session.id}/payform`);
    expect(payform.status).toBe(410);
    expect(payform.body).toMatchObject({
      type: 'urn:portico:problem:iris-session-expired',
      title: 'IRIS session expired',
      resource: `/v1/card/iris/sessions/${session.id}`,
    });
    expect((await call('GET', `/v1/card/iris/sessions/${session.id}`)).body.status).toBe('expired');
    const again = await call('POST', `/v1/card/iris/sessions/${session.id}/payform`);
    expect(again.status).toBe(410);
    expect(await payformCalls(session.id)).toBe(1);
    // A session made after the move lives its 15 minutes from then.
    const fresh = await startSession();
    expect((await call('POST', `/v1/card/iris/sessions/${fresh.id}/payform`)).status).toBe(200);
  });
});
