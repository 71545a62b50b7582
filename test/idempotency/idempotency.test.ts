import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { canonicalJson, requestFingerprint } from '#src/platform/idempotency/fingerprint.js';
import { IdempotencyStore } from '#src/platform/idempotency/idempotency.store.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import {
  BrokenStoreProbeModule,
  IdempotencyProbeModule,
  probe,
} from './idempotency-probe.module.js';

const PAY = '/idem-probe/accounts/acc-1/payments';

interface Sent {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  json(): Record<string, unknown>;
}

describe('Idempotency-Key', () => {
  let sut: TestGateway;
  let key: string;
  let tenantId: string;
  beforeAll(async () => {
    sut = await startTestGateway({}, [IdempotencyProbeModule, BrokenStoreProbeModule]);
    ({ key, tenantId } = await sut.newTenantWithKey('app'));
  });
  afterAll(() => sut.close());

  const post = (payload: object, idempotencyKey?: string, url = PAY, apiKey = key): Promise<Sent> =>
    sut.app.inject({
      method: 'POST',
      url,
      payload,
      headers: {
        ...bearer(apiKey),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
    });

  const record = async (idempotencyKey: string, tenant = tenantId) =>
    (
      await sut.dataSource.query(
        'SELECT * FROM idempotency_records WHERE tenant_id = $1 AND key = $2',
        [tenant, idempotencyKey],
      )
    )[0] as Record<string, unknown> | undefined;

  const expectProblem = (response: Sent, status: number, type: string) => {
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({
      status,
      type,
      requestId: response.headers['x-request-id'],
    });
  };

  /** Waits until the handler for `ref` has started `runs` times. */
  const started = async (ref: string, runs = 1) => {
    for (let i = 0; i < 2000 && probe.runs(ref) < runs; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(probe.runs(ref)).toBe(runs);
  };

  it('replays the stored status, body and Location with Idempotent-Replayed, without running the handler again', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    const first = await post({ ref, amount: 100 }, idem);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.headers.location).toBe(`/idem-probe/payments/${ref}-1`);

    // Key order in the body does not make it another request.
    const again = await sut.app.inject({
      method: 'POST',
      url: PAY,
      headers: { ...bearer(key), 'idempotency-key': idem, 'content-type': 'application/json' },
      payload: `{"amount":100,"ref":"${ref}"}`,
    });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(again.headers['ratelimit-remaining']).toBeDefined();
    expect(probe.runs(ref)).toBe(1);

    const stored = await record(idem);
    expect(stored).toMatchObject({
      state: 'completed',
      route: 'POST /idem-probe/accounts/:account/payments',
      response_status: 201,
      response_body: first.json(),
    });
    expect(Object.keys(stored!.response_headers as object).sort()).toEqual(['location']);
    expect((stored!.expires_at as Date).getTime() - (stored!.created_at as Date).getTime()).toBe(
      24 * 3600 * 1000,
    );
  });

  it('answers 422 when the key is reused with another body, another path or another operation', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    expect((await post({ ref, amount: 100 }, idem)).statusCode).toBe(201);

    const otherBody = await post({ ref, amount: 999 }, idem);
    expectProblem(otherBody, 422, 'urn:portico:problem:idempotency-key-reused');
    expect(otherBody.json().detail).toMatch(/already used with another request/);
    expectProblem(
      await post({ ref, amount: 100 }, idem, '/idem-probe/accounts/acc-2/payments'),
      422,
      'urn:portico:problem:idempotency-key-reused',
    );
    const otherRoute = await post({ ref, amount: 100 }, idem, '/idem-probe/other');
    expectProblem(otherRoute, 422, 'urn:portico:problem:idempotency-key-reused');
    expect(otherRoute.json().detail).toContain('POST /idem-probe/accounts/:account/payments');
    expect(probe.runs(ref)).toBe(1);
  });

  it('answers 409 with Retry-After while the first request is still running, then replays its answer', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    const release = probe.hold(ref);
    const first = post({ ref, amount: 5, mode: 'slow' }, idem);
    await started(ref);

    const concurrent = await post({ ref, amount: 5, mode: 'slow' }, idem);
    expectProblem(concurrent, 409, 'urn:portico:problem:idempotency-in-progress');
    expect(concurrent.headers['retry-after']).toBe('1');
    expect((await record(idem))?.state).toBe('in_progress');

    release();
    expect((await first).statusCode).toBe(201);
    const replay = await post({ ref, amount: 5, mode: 'slow' }, idem);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual((await first).json());
    expect(probe.runs(ref)).toBe(1);
  });

  it('runs the handler once when several requests with one key race', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    const release = probe.hold(ref);
    const racing = Array.from({ length: 5 }, () => post({ ref, amount: 1, mode: 'slow' }, idem));
    await started(ref);
    release();
    const answers = await Promise.all(racing);
    expect(probe.runs(ref)).toBe(1);
    expect(
      answers.filter((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined),
    ).toHaveLength(1);
    const repeats = answers.filter(
      (a) => a.statusCode === 409 || a.headers['idempotent-replayed'] === 'true',
    );
    expect(repeats).toHaveLength(4);
  });

  it('stores a 4xx problem and replays it, with this request id', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    const first = await post({ ref, amount: 7, mode: 'fail-400' }, idem);
    expect(first.statusCode).toBe(400);
    const replay = await post({ ref, amount: 7, mode: 'fail-400' }, idem);
    expect(replay.statusCode).toBe(400);
    expect(replay.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const { requestId: firstId, traceId: firstTrace, ...firstRest } = first.json();
    const { requestId: replayId, traceId: replayTrace, ...replayRest } = replay.json();
    expect(replayRest).toEqual(firstRest);
    expect(replayRest).toMatchObject({ detail: 'amount 7 refused', run: 1 });
    expect(replayId).toBe(replay.headers['x-request-id']);
    expect(replayId).not.toBe(firstId);
    // The replay is an exchange of its own: its own trace, too.
    expect(replayTrace).not.toBe(firstTrace);
    expect(probe.runs(ref)).toBe(1);
  });

  it('keeps nothing for a request refused by validation: the corrected request runs under the same key', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    // The pipe runs inside the interceptor, before the handler: the request never began executing.
    const refused = await post({ ref, amount: 'lots' }, idem);
    expectProblem(refused, 400, 'urn:portico:problem:validation-failed');
    expect(await record(idem)).toBeUndefined();
    const again = await post({ ref, amount: 'lots' }, idem);
    expect(again.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(probe.runs(ref)).toBe(0);

    const corrected = await post({ ref, amount: 5 }, idem);
    expect(corrected.statusCode).toBe(201);
    expect(corrected.json()).toMatchObject({ amount: 5, run: 1 });
    const replay = await post({ ref, amount: 5 }, idem);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(probe.runs(ref)).toBe(1);
  });

  it('does not store a 500: the key is freed and a retry runs the handler', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    expect((await post({ ref, amount: 1, mode: 'fail-500' }, idem)).statusCode).toBe(500);
    expect(await record(idem)).toBeUndefined();
    const retry = await post({ ref, amount: 1, mode: 'fail-500' }, idem);
    expect(retry.statusCode).toBe(500);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(probe.runs(ref)).toBe(2);
  });

  it('keeps the keys of two tenants apart', async () => {
    const other = await sut.newTenantWithKey('app');
    const ref = randomUUID();
    const idem = randomUUID();
    const mine = await post({ ref, amount: 3 }, idem);
    const theirs = await post({ ref, amount: 3 }, idem, PAY, other.key);
    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().run).toBe(2);
    expect(probe.runs(ref)).toBe(2);
    expect((await record(idem, other.tenantId))?.state).toBe('completed');
  });

  it('treats an expired record as absent, even for another body', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    expect((await post({ ref, amount: 1 }, idem)).statusCode).toBe(201);
    await sut.dataSource.query(
      `UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND key = $2`,
      [tenantId, idem],
    );
    const fresh = await post({ ref, amount: 2 }, idem);
    expect(fresh.statusCode).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(probe.runs(ref)).toBe(2);
    expect(await record(idem)).toMatchObject({ state: 'completed', response_body: fresh.json() });
  });

  it('sweeps expired records in bounded batches', async () => {
    const idem = randomUUID();
    await sut.dataSource.query(
      `INSERT INTO idempotency_records (tenant_id, key, route, fingerprint, state, expires_at) VALUES ($1, $2, 'POST /x', repeat('0', 64), 'completed', now() - interval '1 minute')`,
      [tenantId, idem],
    );
    expect(
      await sut.app.get(IdempotencyStore, { strict: false }).sweepExpired(),
    ).toBeGreaterThanOrEqual(1);
    expect(await record(idem)).toBeUndefined();
  });

  it('lets a new attempt take over an in-progress record abandoned past the lock timeout', async () => {
    const ref = randomUUID();
    const idem = randomUUID();
    const release = probe.hold(ref);
    const stuck = post({ ref, amount: 4, mode: 'slow' }, idem);
    await started(ref);
    // As if the replica running it had crashed two minutes ago.
    await sut.dataSource.query(
      `UPDATE idempotency_records SET created_at = now() - interval '2 minutes' WHERE tenant_id = $1 AND key = $2`,
      [tenantId, idem],
    );
    const takeover = await post({ ref, amount: 4 }, idem);
    expectProblem(takeover, 422, 'urn:portico:problem:idempotency-key-reused');
    probe.gates.delete(ref);
    const retried = await post({ ref, amount: 4, mode: 'slow' }, idem);
    expect(retried.statusCode).toBe(201);
    expect(retried.json().run).toBe(2);
    // The abandoned attempt finishing late must not overwrite the answer of the one that took over.
    release();
    expect((await stuck).statusCode).toBe(201);
    const replay = await post({ ref, amount: 4, mode: 'slow' }, idem);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().run).toBe(2);
  });

  it('runs the handler every time without the header, and refuses a malformed key with 400', async () => {
    const ref = randomUUID();
    expect((await post({ ref, amount: 1 })).statusCode).toBe(201);
    expect((await post({ ref, amount: 1 })).statusCode).toBe(201);
    expect(probe.runs(ref)).toBe(2);
    const malformed = await post({ ref, amount: 1 }, 'has space');
    expectProblem(malformed, 400, 'urn:portico:problem:validation-failed');
    expect(malformed.json().errors).toEqual([
      expect.objectContaining({ field: 'header:Idempotency-Key' }),
    ]);
    expect((await post({ ref, amount: 1 }, 'k'.repeat(256))).statusCode).toBe(400);
    expect(probe.runs(ref)).toBe(2);
  });

  it('fails closed: when the store cannot be reached it answers 503 and does not run the handler', async () => {
    const ref = randomUUID();
    const refused = await post({ ref, amount: 1 }, randomUUID(), '/idem-broken/payments');
    expectProblem(refused, 503, 'urn:portico:problem:idempotency-unavailable');
    expect(refused.headers['retry-after']).toBe('1');
    expect(probe.runs(ref)).toBe(0);
    // Without a key the store is not involved.
    expect((await post({ ref, amount: 1 }, undefined, '/idem-broken/payments')).statusCode).toBe(
      201,
    );
  });

  it('documents the header and the problems in the spec', async () => {
    const spec = (await sut.app.inject({ method: 'GET', url: '/docs/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters: { name: string; in: string; schema: object }[];
            responses: Record<string, object>;
          }
        >
      >;
    };
    const operation = spec.paths['/idem-probe/accounts/{account}/payments'].post;
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
      }),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['409', '422', '503']));
  });
});

describe('request fingerprint', () => {
  it('ignores key order but not array order or values', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,1]},"b":1}',
    );
    const base = {
      method: 'POST',
      route: '/v1/x/:id',
      params: { id: '1' },
      body: { a: 1, b: [1, 2] },
    };
    expect(requestFingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint({ ...base, body: { b: [1, 2], a: 1 } })).toBe(
      requestFingerprint(base),
    );
    expect(requestFingerprint({ ...base, body: { a: 1, b: [2, 1] } })).not.toBe(
      requestFingerprint(base),
    );
    expect(requestFingerprint({ ...base, params: { id: '2' } })).not.toBe(requestFingerprint(base));
    expect(requestFingerprint({ ...base, route: '/v1/y/:id' })).not.toBe(requestFingerprint(base));
  });
});
