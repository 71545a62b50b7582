import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { cashRegisterSignature } from '#src/sandbox/pos/pos-cash-register.js';
import { PosInDoubtResolver } from '#src/pos/pos-in-doubt-resolver.service.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { posCall, posTenant, shown, terminals, type PosTenant } from '../support/pos-gateway.js';

let sut: TestGateway;
let app: PosTenant;
let other: PosTenant;

beforeAll(async () => {
  sut = await startTestGateway({ POS_SYNC_WAIT_MS: '20000' });
  app = await posTenant(sut);
  other = await posTenant(sut);
});
afterAll(() => sut.close());

const payment = (terminal: string, fields: Record<string, unknown> = {}) => ({
  transactionId: randomUUID(),
  amount: 1240,
  currency: 'EUR',
  type: 'payment',
  terminal,
  ...fields,
});
const voidOf = (terminal: string, original: string) => ({
  transactionId: randomUUID(),
  currency: 'EUR',
  type: 'void',
  terminal,
  originalTransactionId: original,
});
const post = (body: object, query = '', tenant = app) =>
  posCall(sut, tenant, 'POST', `/v1/pos/transactions${query}`, body);
const get = (id: string, tenant = app) => posCall(sut, tenant, 'GET', `/v1/pos/transactions/${id}`);
const upstreamCode = (response: { json: () => unknown }) =>
  (response.json() as { upstream?: { code?: string } }).upstream?.code;

async function rowOf(transactionId: string) {
  const [row] = (await sut.dataSource.query(
    'SELECT id, kind, status, tenant_id FROM provider_resources WHERE token = $1',
    [transactionId],
  )) as { id: string; kind: string; status: string; tenant_id: string }[];
  const history = (await sut.dataSource.query(
    'SELECT to_status, cause FROM status_changes WHERE subject_id = $1 ORDER BY id',
    [row.id],
  )) as { to_status: string; cause: string }[];
  const accesses = (await sut.dataSource.query(
    'SELECT operation, outcome FROM access_log WHERE card_resource_id = $1 ORDER BY created_at, id',
    [row.id],
  )) as { operation: string; outcome: string }[];
  return { ...row, history, accesses };
}

describe('POS facade', () => {
  it('gives a new sandbox tenant a POS key, stored sealed like its card keys', async () => {
    const [row] = (await sut.dataSource.query(
      'SELECT pos_key_hint, pos_key_sealed FROM card_credentials WHERE tenant_id = $1',
      [app.tenantId],
    )) as { pos_key_hint: string; pos_key_sealed: string }[];
    expect(row.pos_key_hint).toMatch(/^p_…/);
    expect(row.pos_key_sealed).not.toContain('p_sandbox_');
  });

  it('answers a payment the terminal approves within the wait (200), stored with history and access log', async () => {
    const [terminal] = terminals(sut, app);
    const body = payment(terminal.token, { tip: 100, metadata: { order: '1042' } });
    const answer = await post(body);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({
      status: 'CAPTURED',
      transactionId: body.transactionId,
      amount: 1240,
      tip: 100,
      terminal: terminal.token,
      cardNumber: expect.stringMatching(/^\d{6}\*{6}\d{4}$/),
      metadata: { order: '1042' },
    });
    const row = await rowOf(body.transactionId);
    expect(row).toMatchObject({ kind: 'pos_payment', status: 'CAPTURED', tenant_id: app.tenantId });
    expect(row.history.map((h) => h.to_status)).toEqual(['creating', 'CAPTURED']);
    expect(row.accesses).toEqual([{ operation: 'createPosTransaction', outcome: 'ok' }]);
  });

  it('answers 202 with Location when the terminal has not decided, and GET follows it to the result', async () => {
    const [terminal] = terminals(sut, app, { outcome: { action: 'never', afterMs: 0 } });
    const body = payment(terminal.token);
    const accepted = await post(body, '?wait=0');
    expect(accepted.statusCode).toBe(202);
    expect(accepted.headers.location).toBe(`/v1/pos/transactions/${body.transactionId}`);
    expect(accepted.json()).toMatchObject({ transactionId: body.transactionId, amount: 1240 });
    await shown(sut, terminal.token);
    const pending = await get(body.transactionId);
    expect(pending.statusCode).toBe(200);
    expect(pending.json()).toMatchObject({ status: 'PENDING' });
    sut.sandbox.pos.payer(terminal.token, 'approve');
    let status = '';
    while (status !== 'CAPTURED') {
      status = (await get(body.transactionId)).json().status as string;
      if (status !== 'CAPTURED') await sleep(10);
    }
    expect((await rowOf(body.transactionId)).status).toBe('CAPTURED');
  });

  it('a repeated transactionId with the terminal mid-payment starts nothing; another body is 422', async () => {
    const [terminal] = terminals(sut, app, { outcome: { action: 'never', afterMs: 0 } });
    const body = payment(terminal.token);
    expect((await post(body, '?wait=0')).statusCode).toBe(202);
    await shown(sut, terminal.token);
    const repeat = await post(body, '?wait=0');
    expect(repeat.statusCode).toBe(202);
    expect(repeat.headers.location).toBe(`/v1/pos/transactions/${body.transactionId}`);
    expect((await post({ ...body, amount: 1 }, '?wait=0')).statusCode).toBe(422);
    sut.sandbox.pos.payer(terminal.token, 'approve');
    const settled = await post(body);
    expect(settled.json()).toMatchObject({ status: 'CAPTURED' });
    const row = await rowOf(body.transactionId);
    expect(row.accesses.filter((a) => a.operation === 'createPosTransaction')).toHaveLength(1);
  });

  it('a repeat while the terminal is mid-payment shows the status GET shows (PENDING), by transactionId and by Idempotency-Key', async () => {
    const [terminal] = terminals(sut, app, { outcome: { action: 'never', afterMs: 0 } });
    const body = payment(terminal.token);
    const key = randomUUID();
    const send = () =>
      sut.app.inject({
        method: 'POST',
        url: '/v1/pos/transactions?wait=0',
        headers: { ...bearer(app.key), 'idempotency-key': key },
        payload: body,
      });
    expect((await send()).statusCode).toBe(202);
    await shown(sut, terminal.token);
    const shownByGet = (await get(body.transactionId)).json().status as string;
    expect(shownByGet).toBe('PENDING');
    const byTransactionId = await post(body, '?wait=0');
    expect(byTransactionId.statusCode).toBe(202);
    expect(byTransactionId.json()).toMatchObject({ status: shownByGet });
    const byKey = await send();
    expect(byKey.statusCode).toBe(202);
    expect(byKey.headers['idempotent-replayed']).toBe('true');
    expect(byKey.headers.location).toBe(`/v1/pos/transactions/${body.transactionId}`);
    expect(byKey.json()).toMatchObject({ transactionId: body.transactionId, status: shownByGet });
    sut.sandbox.pos.payer(terminal.token, 'approve');
    let settled = await send();
    while (settled.json().status !== 'CAPTURED') {
      await sleep(10);
      settled = await send();
    }
    expect(settled.statusCode).toBe(200);
    const row = await rowOf(body.transactionId);
    expect(row.accesses.filter((a) => a.operation === 'createPosTransaction')).toHaveLength(1);
  });

  it('a lost answer (chaos) is resolved by transactionId: one transaction, answered once', async () => {
    const [terminal] = terminals(sut, app);
    sut.sandbox.chaos.add({
      operation: 'createPosTransaction',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const body = payment(terminal.token);
    const answer = await post(body);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ status: 'CAPTURED', transactionId: body.transactionId });
    expect(sut.sandbox.pos.transaction(body.transactionId)?.status).toBe('CAPTURED');
    const row = await rowOf(body.transactionId);
    expect(row.history.map((h) => h.to_status)).toEqual(['creating', 'unknown', 'CAPTURED']);
    expect(row.history[2].cause).toBe('found-by-transaction-id');
    expect(row.accesses.map((a) => a.operation)).toEqual([
      'createPosTransaction',
      'getPosTransaction',
    ]);
    expect(row.accesses[0].outcome).toMatch(/^unknown:/);
    const again = await post(body);
    expect(again.json()).toEqual(answer.json());
  });

  it('a lost answer whose lookup fails too stays in doubt (202) until the resolver reads it by transactionId', async () => {
    const [terminal] = terminals(sut, app);
    sut.sandbox.chaos.add({
      operation: 'createPosTransaction',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    sut.sandbox.chaos.add({
      operation: 'getPosTransaction',
      fault: 'status',
      status: 500,
      times: 2,
    });
    const body = payment(terminal.token);
    const answer = await post(body);
    expect(answer.statusCode).toBe(202);
    expect((await rowOf(body.transactionId)).status).toBe('unknown');
    await sut.app.get(PosInDoubtResolver).resolveOnce(0);
    const row = await rowOf(body.transactionId);
    expect(row.status).toBe('CAPTURED');
    expect(row.history.at(-1)?.cause).toBe('resolver');
    expect((await get(body.transactionId)).json()).toMatchObject({ status: 'CAPTURED' });
    expect(row.accesses.filter((a) => a.operation === 'createPosTransaction')).toHaveLength(1);
  });

  it('refuses bad input itself, naming the field (problem+json, never sent)', async () => {
    const [terminal] = terminals(sut, app);
    const answer = await post({ ...payment(terminal.token), currency: 'USD', transactionId: 'x' });
    expect(answer.statusCode).toBe(400);
    expect(answer.headers['content-type']).toContain('application/problem+json');
    expect(JSON.stringify(answer.json())).toContain('currency');
    expect(JSON.stringify(answer.json())).toContain('transactionId');
  });
});

describe('POS facade: the provider refusals, each code by its seed condition', () => {
  it('10001 (cash-register field missing) 400, 10007 (mismatch) 400', async () => {
    const [terminal] = terminals(sut, app, { cashRegisterValidation: true });
    const missing = await post(payment(terminal.token));
    expect({ status: missing.statusCode, code: upstreamCode(missing) }).toEqual({
      status: 400,
      code: '10001',
    });
    const fields = {
      uid: 'r-1',
      net_value: '10.00',
      vat_value: '2.40',
      total_value: '12.40',
      payment_amount: '12.40',
      tid: terminal.tid,
      time_stamp: new Date().toISOString(),
    };
    const signed = {
      ...fields,
      signature: cashRegisterSignature(terminal.cash_registry_secret as string, fields),
    };
    expect((await post(payment(terminal.token, { metadata: signed }))).json()).toMatchObject({
      status: 'CAPTURED',
    });
    const mismatch = await post(payment(terminal.token, { amount: 999, metadata: signed }));
    expect({ status: mismatch.statusCode, code: upstreamCode(mismatch) }).toEqual({
      status: 400,
      code: '10007',
    });
  });

  it('10002 another tenant terminal (403), 10005 another tenant transaction (403), 404 for its GET', async () => {
    const [terminal] = terminals(sut, app);
    const [theirs] = terminals(sut, other);
    const foreign = await post(payment(theirs.token));
    expect({ status: foreign.statusCode, code: upstreamCode(foreign) }).toEqual({
      status: 403,
      code: '10002',
    });
    const body = payment(terminal.token);
    await post(body);
    const reused = await post({ ...body, terminal: theirs.token }, '', other);
    expect({ status: reused.statusCode, code: upstreamCode(reused) }).toEqual({
      status: 403,
      code: '10005',
    });
    expect((await get(body.transactionId, other)).statusCode).toBe(403);
  });

  it('10003 disabled (422), 10006 not connected (409), 10008 busy (422), 10004 from an unresponsive terminal (202, then settled)', async () => {
    const [disabled] = terminals(sut, app, { status: 'disabled' });
    const [offline] = terminals(sut, app, { connected: false });
    const [busy] = terminals(sut, app, { busy: true });
    const [mute] = terminals(sut, app, {
      outcome: { action: 'never', afterMs: 0 },
      holdMs: 30,
      unresponsive: true,
    });
    const codes = [];
    for (const token of [disabled.token, offline.token, busy.token]) {
      const answer = await post(payment(token));
      codes.push([answer.statusCode, upstreamCode(answer)]);
    }
    expect(codes).toEqual([
      [422, '10003'],
      [409, '10006'],
      [422, '10008'],
    ]);
    const body = payment(mute.token);
    const held = await post(body);
    expect(held.statusCode).toBe(202);
    expect((await rowOf(body.transactionId)).history.map((h) => h.cause)).toContain(
      'terminal-did-not-report',
    );
    sut.sandbox.pos.payer(mute.token, 'approve');
    expect((await get(body.transactionId)).json()).toMatchObject({ status: 'CAPTURED' });
    expect((await rowOf(body.transactionId)).status).toBe('CAPTURED');
  });

  it('voids: captured once (void row with its original), then 10013; 10009, 10011, 10012, 10010', async () => {
    const [a, b] = terminals(sut, app, { count: 2 });
    const first = payment(a.token);
    await post(first);
    const voided = await post(voidOf(a.token, first.transactionId));
    expect(voided.json()).toMatchObject({
      status: 'CAPTURED',
      type: 'void',
      originalTransactionId: first.transactionId,
    });
    const codeOf = async (body: object) => upstreamCode(await post(body));
    expect(await codeOf(voidOf(a.token, first.transactionId))).toBe('10013');
    expect(await codeOf(voidOf(a.token, randomUUID()))).toBe('10009');
    const second = payment(a.token);
    await post(second);
    expect(await codeOf(voidOf(b.token, second.transactionId))).toBe('10011');
    sut.sandbox.pos.closeBatch(a.token);
    expect(await codeOf(voidOf(a.token, second.transactionId))).toBe('10012');
    const third = payment(b.token);
    await post(third);
    sut.sandbox.card.advanceClock(24 * 3600 + 60);
    expect(await codeOf(voidOf(b.token, third.transactionId))).toBe('10010');
  });
});

describe('POS facade: terminals', () => {
  it('pages 34 terminals by 10 (10, 10, 10, 4) and lists a terminal pending ERP transactions', async () => {
    const tenant = await posTenant(sut);
    terminals(sut, tenant, { count: 33 });
    const [erp] = terminals(sut, tenant, { erpPendingTransactions: 3 });
    const sizes = [];
    for (const page of [1, 2, 3, 4]) {
      const answer = await posCall(sut, tenant, 'GET', `/v1/pos/terminals?page=${page}&limit=10`);
      expect(answer.json()).toMatchObject({ totalCount: 34, page });
      sizes.push((answer.json().items as unknown[]).length);
    }
    expect(sizes).toEqual([10, 10, 10, 4]);
    const pending = await posCall(
      sut,
      tenant,
      'GET',
      `/v1/pos/terminals/${erp.token}/pending?limit=50`,
    );
    expect(pending.json()).toMatchObject({ totalCount: 3, page: 1 });
    const tooMany = await posCall(
      sut,
      tenant,
      'GET',
      `/v1/pos/terminals/${erp.token}/pending?limit=51`,
    );
    expect(tooMany.statusCode).toBe(400);
  });
});
