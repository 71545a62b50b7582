// The interceptor's decisions without a gateway or a database: the store is an in-memory stand-in for
// the records (claim, bind, complete, release), the route a handler the test scripts.
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { defer, lastValueFrom } from 'rxjs';
import { PROBLEM_TYPES, ProblemException } from '../errors/problem.js';
import { requestContext } from '../logging/request-context.js';
import { BoundResources, type BoundResourceState } from './bound-resources.js';
import { bindIdempotentResource } from './idempotency-binding.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import type { ClaimOutcome, IdempotencyStore, StoredResponse } from './idempotency.store.js';

interface Record_ {
  route: string;
  fingerprint: string;
  lease: string;
  response?: StoredResponse;
  resource?: string;
}

/** The records as the store keeps them, one per tenant and key. */
class MemoryStore {
  readonly records = new Map<string, Record_>();
  reachable = true;

  async claim(
    tenantId: string,
    key: string,
    route: string,
    fingerprint: string,
  ): Promise<ClaimOutcome> {
    if (!this.reachable) throw new Error('connect ECONNREFUSED');
    const record = this.records.get(`${tenantId}/${key}`);
    if (!record) {
      const lease = randomUUID();
      this.records.set(`${tenantId}/${key}`, { route, fingerprint, lease });
      return { outcome: 'claimed', lease };
    }
    if (record.fingerprint !== fingerprint) return { outcome: 'mismatch', route: record.route };
    if (record.response)
      return { outcome: 'completed', response: record.response, resource: record.resource };
    return { outcome: 'in-progress', resource: record.resource };
  }

  async bind(tenantId: string, key: string, _lease: string, resource: string): Promise<void> {
    this.records.get(`${tenantId}/${key}`)!.resource = resource;
  }

  async complete(
    tenantId: string,
    key: string,
    _lease: string,
    response: StoredResponse,
  ): Promise<boolean> {
    this.records.get(`${tenantId}/${key}`)!.response = response;
    return true;
  }

  async release(tenantId: string, key: string): Promise<void> {
    this.records.delete(`${tenantId}/${key}`);
  }
}

/** A reply as the interceptor uses it: a status and headers (named in lower case, as Fastify's). */
class Reply {
  statusCode = 201;
  readonly sent: Record<string, string> = {};
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  headers(values: Record<string, string>) {
    for (const [name, value] of Object.entries(values)) this.header(name, value);
    return this;
  }
  header(name: string, value: string) {
    this.sent[name.toLowerCase()] = value;
    return this;
  }
  getHeaders() {
    return { ...this.sent };
  }
}

const TENANT = '7d1c1f6e-2f55-4a0e-9a41-0b6f1f0a7c11';

function setup() {
  const store = new MemoryStore();
  const states = new Map<string, BoundResourceState>();
  const resources = new BoundResources();
  resources.register({ prefix: '/v1/payments/', read: async (_tenant, id) => states.get(id) });
  const sut = new IdempotencyInterceptor(
    store as unknown as IdempotencyStore,
    resources,
    pino({ level: 'silent' }),
  );
  let runs = 0;

  /** One POST /v1/payments through the interceptor, the handler doing `handler` (by default, 201 with the body). */
  async function send(
    options: {
      key?: string;
      body?: unknown;
      principal?: boolean;
      handler?: (reply: Reply) => Promise<unknown>;
    } = {},
  ) {
    const reply = new Reply();
    const request = {
      method: 'POST',
      url: '/v1/payments',
      routeOptions: { url: '/v1/payments' },
      params: {},
      body: options.body ?? { amount: '10.00' },
      headers: options.key === undefined ? {} : { 'idempotency-key': options.key },
      principal: options.principal === false ? undefined : { tenantId: TENANT },
    };
    const context = {
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
      getHandler: () => send,
    } as unknown as ExecutionContext;
    const next: CallHandler = {
      handle: () =>
        defer(async () => {
          runs++;
          reply.header('x-request-id', randomUUID());
          reply.header('ratelimit-remaining', '9');
          reply.header('location', '/v1/payments/p1');
          return options.handler
            ? options.handler(reply)
            : { id: 'p1', ...(request.body as object) };
        }),
    };
    return requestContext.run({ requestId: randomUUID() }, async () => {
      try {
        const body = await lastValueFrom(sut.intercept(context, next), { defaultValue: undefined });
        return { status: reply.statusCode, headers: reply.getHeaders(), body };
      } catch (error) {
        if (!(error instanceof ProblemException)) throw error;
        return {
          status: error.init.status,
          headers: (error.init.headers ?? {}) as Record<string, string>,
          body: {
            type: error.init.type,
            detail: error.init.detail,
            errors: error.init.errors,
            ...error.init.extensions,
          },
        };
      }
    });
  }
  return { store, states, send, runs: () => runs };
}

const refusal = (status: number, type: string) =>
  new ProblemException({ status, type, title: 'Refused', detail: 'refused' });

describe('the idempotency interceptor', () => {
  it('runs a request without a key as it is, keeping nothing', async () => {
    const { store, send, runs } = setup();
    expect(await send()).toMatchObject({ status: 201, body: { id: 'p1' } });
    expect(await send()).toMatchObject({ status: 201 });
    expect(runs()).toBe(2);
    expect(store.records.size).toBe(0);
  });

  it('refuses a malformed key as a validation problem naming the header, without running', async () => {
    const { send, runs } = setup();
    expect(await send({ key: 'has space' })).toMatchObject({
      status: 400,
      body: {
        type: PROBLEM_TYPES.validation,
        errors: [expect.objectContaining({ field: 'header:Idempotency-Key' })],
      },
    });
    expect(runs()).toBe(0);
  });

  it('replays the first answer to a repeat, marked replayed, without this exchange’s own headers', async () => {
    const { send, runs } = setup();
    const first = await send({ key: 'k1' });
    expect(first).toMatchObject({ status: 201, body: { id: 'p1', amount: '10.00' } });
    const again = await send({ key: 'k1' });
    expect(runs()).toBe(1);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers).toEqual({
      location: '/v1/payments/p1',
      'idempotent-replayed': 'true',
    });
  });

  it('answers 422 naming the first route to the same key with another body', async () => {
    const { send, runs } = setup();
    await send({ key: 'k1' });
    const other = await send({ key: 'k1', body: { amount: '99.00' } });
    expect(other).toMatchObject({
      status: 422,
      body: { type: 'urn:portico:problem:idempotency-key-reused' },
    });
    expect(runs()).toBe(1);
  });

  it('answers 409 with Retry-After to a repeat while the first still runs', async () => {
    const { send, runs } = setup();
    let finish = () => {};
    const first = send({
      key: 'k1',
      handler: () => new Promise((done) => (finish = () => done({ id: 'p1' }))),
    });
    await new Promise((done) => setImmediate(done));
    expect(await send({ key: 'k1' })).toMatchObject({
      status: 409,
      headers: { 'Retry-After': '1' },
      body: { type: 'urn:portico:problem:idempotency-in-progress' },
    });
    finish();
    expect((await first).status).toBe(201);
    expect(runs()).toBe(1);
  });

  it('replays a client error, but keeps nothing of a request refused by validation', async () => {
    const { send, runs } = setup();
    const notFound = () => Promise.reject(refusal(404, PROBLEM_TYPES.notFound));
    expect((await send({ key: 'k1', handler: notFound })).status).toBe(404);
    expect(await send({ key: 'k1' })).toMatchObject({
      status: 404,
      headers: { 'Idempotent-Replayed': 'true' },
    });
    expect(runs()).toBe(1);

    const invalid = () => Promise.reject(refusal(400, PROBLEM_TYPES.validation));
    expect((await send({ key: 'k2', handler: invalid })).status).toBe(400);
    // Corrected and sent again under the same key: it runs.
    expect(await send({ key: 'k2', body: { amount: '12.00' } })).toMatchObject({
      status: 201,
      body: { amount: '12.00' },
    });
    expect(runs()).toBe(3);
  });

  it('frees the key after a server error that wrote nothing, so the retry runs', async () => {
    const { send, runs } = setup();
    const failing = () => Promise.reject(refusal(502, 'urn:portico:problem:upstream-unavailable'));
    expect((await send({ key: 'k1', handler: failing })).status).toBe(502);
    expect((await send({ key: 'k1' })).status).toBe(201);
    expect(runs()).toBe(2);
  });

  it('never runs again a request that wrote its resource: in doubt 409, then the resource as settled', async () => {
    const { send, states, runs } = setup();
    const lost = async () => {
      await bindIdempotentResource('/v1/payments/p1');
      throw new ProblemException({
        status: 504,
        type: 'urn:portico:problem:upstream-timeout',
        title: 'Gateway Timeout',
        extensions: { outcome: 'unknown', paymentId: 'p1' },
      });
    };
    expect((await send({ key: 'k1', handler: lost })).status).toBe(504);
    states.set('p1', { state: 'in-doubt' });
    expect(await send({ key: 'k1' })).toMatchObject({
      status: 409,
      body: { type: 'urn:portico:problem:outcome-unknown', outcome: 'unknown', paymentId: 'p1' },
    });
    states.set('p1', { state: 'settled', body: { id: 'p1', status: 'ACSC' }, status: 201 });
    expect(await send({ key: 'k1' })).toMatchObject({
      status: 201,
      body: { id: 'p1', status: 'ACSC' },
      headers: { 'idempotent-replayed': 'true' },
    });
    expect(runs()).toBe(1);
  });

  it('refuses with 503, without running, when the store cannot be reached', async () => {
    const { store, send, runs } = setup();
    store.reachable = false;
    expect(await send({ key: 'k1' })).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '1' },
      body: { type: 'urn:portico:problem:idempotency-unavailable' },
    });
    expect(runs()).toBe(0);
  });

  it('needs a principal: keys belong to a tenant', async () => {
    const { send } = setup();
    await expect(send({ key: 'k1', principal: false })).rejects.toThrow(/needs @Auth\(\)/);
  });
});
