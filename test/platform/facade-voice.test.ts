import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { posTenant, terminals, type PosTenant } from '../support/pos-gateway.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** RFC 3339 in UTC, as the facade gives every timestamp (milliseconds where Portico stamped it). */
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
/** Anything that reads as a date with a time of day, in any provider's spelling. */
const LOOKS_LIKE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

/** Every string of an answer that reads as a time of day, by its path (`items[0].dateCreated`). */
function timesOf(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return LOOKS_LIKE_TIME.test(value) ? [[path, value]] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => timesOf(item, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([key, inner]) =>
      timesOf(inner, path ? `${path}.${key}` : key),
    );
  return [];
}

/** Every object of an answer that holds a list (an array of objects), by its path and its keys. */
function listsOf(value: unknown, path = ''): [string, string[]][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => listsOf(item, `${path}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const entries = Object.entries(value);
  const holds = entries.some(
    ([key, inner]) =>
      Array.isArray(inner) && ['items', 'data', 'tenants', 'apiKeys', 'brands'].includes(key),
  );
  return [
    ...(holds ? [[path, entries.map(([key]) => key).sort()] as [string, string[]]] : []),
    ...entries.flatMap(([key, inner]) => listsOf(inner, path ? `${path}.${key}` : key)),
  ];
}

describe('the facade speaks one voice: timestamps and lists on every route', () => {
  let sut: TestGateway;
  let app: PosTenant;
  let admin: { key: string; tenantId: string };
  let operator: { key: string };
  let auditor: { key: string };
  let posBody: Record<string, unknown>;
  /** Every answer of the walk, by `METHOD path`. */
  const answers = new Map<string, unknown>();
  /** The refusals of the walk, by what was refused. */
  const problems = new Map<string, { status: number; contentType: string; body: Json }>();

  const refusal = async (
    name: string,
    key: string,
    method: 'GET' | 'POST',
    url: string,
    payload?: object,
    headers: Record<string, string> = {},
  ) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...headers },
      ...(payload ? { payload } : {}),
    });
    problems.set(name, {
      status: response.statusCode,
      contentType: String(response.headers['content-type']),
      body: response.json() as Json,
    });
  };

  const call = async (
    key: string,
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    payload?: object,
  ) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: { ...bearer(key), 'idempotency-key': randomUUID() },
      ...(payload ? { payload } : {}),
    });
    if (response.statusCode >= 300)
      throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    const body = response.json() as Json;
    answers.set(`${method} ${url}`, body);
    return body;
  };

  beforeAll(async () => {
    sut = await startTestGateway({ POS_SYNC_WAIT_MS: '20000' });
    app = await posTenant(sut);
    const adminKey = await sut.tenants.issueKey(app.tenantId, 'admin', 'voice admin');
    admin = { key: adminKey.key, tenantId: app.tenantId };
    operator = await sut.newTenantWithKey('operator');
    auditor = await sut.newTenantWithKey('auditor');

    const card = {
      cardNumber: '5217925525906273',
      expirationMonth: '12',
      expirationYear: '2031',
      holderName: 'Ada Lovelace',
      cvv: '123',
    };
    const customer = await call(app.key, 'POST', '/v1/card/customers', {
      fullName: 'Ada Lovelace',
      email: 'ada@example.com',
      ...card,
    });
    await call(app.key, 'GET', `/v1/card/customers/${customer.token}`);
    const payment = await call(app.key, 'POST', '/v1/card/payments', {
      amount: 2500,
      token: customer.token,
      mandateReference: 'voice-mandate-1',
      split: 1,
    });
    await call(app.key, 'POST', '/v1/card/refunds', { payment: payment.token, amount: 100 });
    await call(app.key, 'GET', `/v1/card/payments/${payment.token}`);
    await call(app.key, 'GET', '/v1/card/payments');
    await call(app.key, 'GET', '/v1/card/refunds');
    await call(app.key, 'GET', `/v1/card/customers/${customer.token}/mandates`);
    await call(app.key, 'GET', `/v1/card/customers/${customer.token}/cards`);
    await call(app.key, 'GET', '/v1/card/branches');
    await call(app.key, 'POST', '/v1/card/notifications', {
      payeeName: 'Eleni Georgiou',
      payeeEmail: 'eleni@example.com',
      payeePhone: '+306900000001',
      amount: 2500,
      description: 'Invoice 42',
      skipNotify: 1,
      expirationDate: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await call(app.key, 'GET', '/v1/card/notifications');
    const seller = await call(app.key, 'POST', '/v1/marketplace/sellers', {
      email: 'orders@olive-shop.example',
      contactPhone: '+306900000000',
      description: 'Olive oil and honey',
      business: {
        name: 'Olive Shop',
        title: 'Olive Shop S.A.',
        taxNumber: 'EL123456789',
        address: 'Ermou 12, Athens',
      },
      bankAccount: { iban: 'GR1601101250000000012300695', beneficiaryName: 'Olive Shop S.A.' },
    });
    await call(app.key, 'POST', `/v1/marketplace/payments/${payment.token}/transfers`, {
      seller: seller.token,
      amount: 1000,
      commissionAmount: 100,
      description: 'Order share',
    });
    await call(app.key, 'GET', '/v1/marketplace/transfers');
    await call(app.key, 'GET', '/v1/marketplace/sellers');
    await call(app.key, 'GET', '/v1/marketplace/payouts');

    const [terminal] = terminals(sut, app);
    await call(app.key, 'GET', '/v1/pos/terminals');
    posBody = {
      transactionId: randomUUID(),
      amount: 1240,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    };
    const pos = await call(app.key, 'POST', '/v1/pos/transactions', posBody);
    await call(app.key, 'GET', `/v1/pos/transactions/${pos.transactionId}`);

    await call(app.key, 'POST', '/v1/webhooks/endpoints', {
      url: 'https://app.example/hooks',
      eventTypes: ['card_payment.status_changed'],
    });
    await call(app.key, 'GET', '/v1/webhooks/endpoints');
    await call(app.key, 'GET', '/v1/webhooks/events');
    await call(admin.key, 'GET', `/v1/tenants/${admin.tenantId}/api-keys`);
    await call(operator.key, 'GET', '/v1/tenants');
    await call(auditor.key, 'GET', '/v1/audit/tenants');
    await call(auditor.key, 'GET', '/v1/audit/card-resources');
    await call(auditor.key, 'GET', '/v1/audit/accesses');
    await call(auditor.key, 'GET', '/v1/audit/checkpoints');

    // The same problem type met on card and POS routes.
    const reused = { 'idempotency-key': randomUUID() };
    await call(app.key, 'POST', '/v1/card/refunds', { payment: payment.token, amount: 50 });
    await refusal(
      'card first',
      app.key,
      'POST',
      '/v1/card/refunds',
      { payment: payment.token, amount: 60 },
      reused,
    );
    await refusal(
      'card key reused',
      app.key,
      'POST',
      '/v1/card/refunds',
      { payment: payment.token, amount: 70 },
      reused,
    );
    const again = { ...posBody, amount: 1 };
    await refusal('pos key reused', app.key, 'POST', '/v1/pos/transactions', again);
    await refusal('card refused', app.key, 'GET', '/v1/card/payments/pmt_unknown00000000000');
    const [disabled] = terminals(sut, app, { status: 'disabled' });
    await refusal('pos refused', app.key, 'POST', '/v1/pos/transactions', {
      ...posBody,
      transactionId: randomUUID(),
      terminal: disabled.token,
    });
    for (const url of [
      `/v1/card/payments/${'p'.repeat(101)}`,
      `/v1/pos/transactions/${'t'.repeat(101)}`,
      `/v1/webhooks/endpoints/${'e'.repeat(101)}`,
    ])
      await refusal(`414 ${url.slice(0, 20)}`, app.key, 'GET', url);
    await sleep(0);
  }, 120_000);
  afterAll(() => sut.close());

  it('gives every timestamp as RFC 3339 in UTC, whatever the provider sent', () => {
    const times = [...answers].flatMap(([route, body]) =>
      timesOf(body).map(([path, value]) => ({ route, path, value })),
    );
    const names = new Set(times.map((time) => time.path.replace(/^.*\./, '')));
    // The provider's three spellings are among them: card, mandates, POS transactions and terminals.
    for (const name of ['dateCreated', 'dateModified', 'transactionTime', 'dateOnboarded'])
      expect(names).toContain(name);
    expect(times.some((time) => /mandates/.test(time.route))).toBe(true);
    expect(times.filter((time) => !RFC3339_UTC.test(time.value))).toEqual([]);
  });

  it('answers every list, embedded lists too, as {totalCount, items}', () => {
    const lists = [...answers].flatMap(([route, body]) =>
      listsOf(body).map(([path, keys]) => ({ route, path, keys })),
    );
    expect(lists.length).toBeGreaterThan(20);
    const odd = lists.filter(
      (list) => !list.keys.includes('items') || !list.keys.includes('totalCount'),
    );
    expect(odd).toEqual([]);
    // The customer's embedded cards included.
    const customer = [...answers].find(([route]) => /^GET \/v1\/card\/customers\/cus_/.test(route));
    expect((customer?.[1] as Json).cards).toMatchObject({ totalCount: 1, items: [{}] });
  });

  it('gives each problem type one title on every route', () => {
    for (const problem of problems.values())
      if (problem.status >= 400) expect(problem.contentType).toMatch(/^application\/problem\+json/);
    const reused = [problems.get('card key reused')!, problems.get('pos key reused')!];
    expect(reused.map(({ status, body }) => [status, body.type, body.title])).toEqual([
      [422, 'urn:portico:problem:idempotency-key-reused', 'Idempotency key reused'],
      [422, 'urn:portico:problem:idempotency-key-reused', 'Idempotency key reused'],
    ]);
    const refused = [problems.get('card refused')!, problems.get('pos refused')!];
    expect(refused.map(({ body }) => [body.type, body.title])).toEqual([
      ['urn:portico:problem:upstream-refused', 'Refused by the provider'],
      ['urn:portico:problem:upstream-refused', 'Refused by the provider'],
    ]);
  });

  it('answers a path parameter over 100 characters 414 as problem+json with its instance', () => {
    const long = [...problems].filter(([name]) => name.startsWith('414'));
    expect(long).toHaveLength(3);
    for (const [, { status, body }] of long) {
      expect(status).toBe(414);
      expect(body).toMatchObject({
        type: expect.stringMatching(/^urn:portico:problem:/) as unknown,
        title: expect.any(String) as unknown,
        instance: expect.stringMatching(/^\/v1\//) as unknown,
        requestId: expect.any(String) as unknown,
      });
    }
  });
});
