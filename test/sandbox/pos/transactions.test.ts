import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  cashRegisterData,
  payment,
  PosSandboxClient,
  type PosMerchant,
} from '../../support/pos-api.js';

let sut: PosSandboxClient;
let merchant: PosMerchant;
let other: PosMerchant;

beforeAll(async () => {
  sut = await PosSandboxClient.start();
  merchant = await sut.merchant();
  other = await sut.merchant();
});
afterAll(() => sut.close());

const create = (json: unknown, key = merchant.posKey) =>
  sut.call('createPosTransaction', { key, json });

describe('POS payments on the sandbox terminal', () => {
  it('holds the request until the payer approves, then answers CAPTURED with the card read', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
    });
    const body = payment(terminal.token, { tip: 100, metadata: { order: '1042' } });
    const answer = create(body);
    const shown = await sut.shown(terminal.token);
    expect(shown).toBe(body.transaction_id);
    const inFlight = await sut.call('getPosTransaction', {
      key: merchant.posKey,
      params: { transactionId: shown },
    });
    expect(inFlight.body).toMatchObject({
      status: 'PENDING',
      amount: 1240,
      tip: 100,
      terminal: terminal.token,
    });
    expect(inFlight.body).not.toHaveProperty('card_number');
    await sut.payer(terminal.token, 'approve');
    const result = await answer;
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      status: 'CAPTURED',
      transaction_id: body.transaction_id,
      amount: 1240,
      tip: 100,
      currency: 'EUR',
      type: 'payment',
      tid: terminal.tid,
      terminal: terminal.token,
      batch: '1',
      metadata: { order: '1042' },
    });
    expect(result.body.card_number).toMatch(/^\d{6}\*{6}\d{4}$/);
    expect(result.body.transaction_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (AM|PM)$/);
  });

  it('answers FAILED when the payer is declined and just { status: CANCELLED } when cancelled', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
    });
    const declined = create(payment(terminal.token));
    await sut.shown(terminal.token);
    await sut.payer(terminal.token, 'decline');
    expect((await declined).body).toMatchObject({ status: 'FAILED', type: 'payment' });
    const cancelled = create(payment(terminal.token));
    await sut.shown(terminal.token);
    await sut.payer(terminal.token, 'cancel');
    expect(await cancelled).toMatchObject({ status: 200, body: { status: 'CANCELLED' } });
  });

  it('plays the terminal default outcome after its delay', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'decline', afterMs: 20 },
    });
    expect((await create(payment(terminal.token))).body).toMatchObject({ status: 'FAILED' });
  });

  it('a repeated transaction_id answers the earlier result and starts nothing, also mid-payment', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
    });
    const body = payment(terminal.token);
    const first = create(body);
    await sut.shown(terminal.token);
    const repeat = create({ ...body, amount: 9999 });
    await sut.payer(terminal.token, 'approve');
    const [a, b] = await Promise.all([first, repeat]);
    expect(b.body).toEqual(a.body);
    expect(b.body).toMatchObject({ status: 'CAPTURED', amount: 1240 });
    const again = await create(body);
    expect(again.body).toEqual(a.body);
    // The terminal is free: nothing else was started on it.
    expect(sut.sandbox.pos.terminal(terminal.token)?.current).toBeUndefined();
  });

  it('ends a payment the payer leaves when the hold runs out: 200 { status: CANCELLED }, CANCELLED on every read, the payer can no longer approve', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
      holdMs: 300,
    });
    const body = payment(terminal.token);
    const started = Date.now();
    const answer = await create(body);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(answer).toMatchObject({ status: 200, body: { status: 'CANCELLED' } });
    expect(answer.body).toEqual({ status: 'CANCELLED' });
    // Over at the terminal: nothing shown, the payer's approval refused, the terminal free again.
    const control = await sut.card.control('GET', `/sandbox/pos/terminals/${terminal.token}`);
    expect(control.body).toMatchObject({ currentTransaction: null });
    const late = await sut.card.control('POST', `/sandbox/pos/terminals/${terminal.token}/payer`, {
      action: 'approve',
    });
    expect(late.status).toBe(409);
    const params = { transactionId: body.transaction_id as string };
    for (const read of [
      await sut.call('getPosTransaction', { key: merchant.posKey, params }),
      await create(body),
    ])
      expect(read).toMatchObject({ status: 200, body: { status: 'CANCELLED' } });
    const next = await create(payment(terminal.token));
    expect(next.status).toBe(200);
  });

  it('a repeat of a shown payment waits for the same hold, not a new one', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
      holdMs: 1_000,
    });
    const body = payment(terminal.token);
    const first = create(body);
    await sut.shown(terminal.token);
    // The point: the repeat comes well into the first hold, and ends with it, not a new hold later.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const started = Date.now();
    const repeat = await create(body);
    expect(repeat.body).toEqual({ status: 'CANCELLED' });
    expect(Date.now() - started).toBeLessThan(900);
    expect((await first).body).toEqual({ status: 'CANCELLED' });
  });

  it('10004 when an unresponsive terminal never acknowledges within the hold; a late report still settles it', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
      holdMs: 50,
      unresponsive: true,
    });
    const body = payment(terminal.token);
    await sut.refused('createPosTransaction', { key: merchant.posKey, json: body }, 10004);
    const read = await sut.call('getPosTransaction', {
      key: merchant.posKey,
      params: { transactionId: body.transaction_id as string },
    });
    expect(read.body).toMatchObject({ status: 'INITIATING' });
    await sut.payer(terminal.token, 'approve');
    const late = await sut.call('getPosTransaction', {
      key: merchant.posKey,
      params: { transactionId: body.transaction_id as string },
    });
    expect(late.body).toMatchObject({ status: 'CAPTURED' });
  });
});

describe('POS refusals (pos.yaml error table)', () => {
  it('10001 names every refused field in invalid-params', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    const body = await sut.refused(
      'createPosTransaction',
      {
        key: merchant.posKey,
        json: {
          ...payment(terminal.token),
          transaction_id: 'not-a-uuid',
          currency: 'USD',
          tip: -1,
        },
      },
      10001,
    );
    expect(body['invalid-params']?.map((p) => p.name).sort()).toEqual([
      'currency',
      'tip',
      'transaction_id',
    ]);
  });

  it('10001 for metadata over the limits: 23 fields, keys of 40, values of 200', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    const many = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`k${i}`, 'v']));
    const refusedNames = async (metadata: Record<string, string>) =>
      (
        await sut.refused(
          'createPosTransaction',
          { key: merchant.posKey, json: payment(terminal.token, { metadata }) },
          10001,
        )
      )['invalid-params']?.map((p) => p.name);
    expect(await refusedNames(many)).toEqual(['metadata']);
    expect(await refusedNames({ ['k'.repeat(41)]: 'v' })).toEqual([`metadata.${'k'.repeat(41)}`]);
    expect(await refusedNames({ note: 'v'.repeat(201) })).toEqual(['metadata.note']);
    const ok = {
      ...Object.fromEntries(Array.from({ length: 22 }, (_, i) => [`k${i}`, 'v'])),
      ['k'.repeat(40)]: 'v'.repeat(200),
    };
    expect((await create(payment(terminal.token, { metadata: ok }))).body).toMatchObject({
      status: 'CAPTURED',
    });
  });

  it('10002 for an unknown key, a card key, and another merchant terminal', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    await sut.refused('listPosTerminals', { key: 'p_unknown' }, 10002);
    await sut.refused('listPosTerminals', { key: null }, 10002);
    await sut.refused(
      'createPosTransaction',
      { key: other.posKey, json: payment(terminal.token) },
      10002,
    );
  });

  it('10003 for an unknown or disabled terminal', async () => {
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: payment('trm_nosuchterminal') },
      10003,
    );
    const disabled = await sut.terminal(merchant.merchantId, { status: 'disabled' });
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: payment(disabled.token) },
      10003,
    );
  });

  it('10005 for another merchant transaction, or one nobody made', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    const body = payment(terminal.token);
    await create(body);
    const params = { transactionId: body.transaction_id as string };
    await sut.refused('getPosTransaction', { key: other.posKey, params }, 10005);
    await sut.refused(
      'getPosTransaction',
      { key: merchant.posKey, params: { transactionId: randomUUID() } },
      10005,
    );
    const otherTerminal = await sut.terminal(other.merchantId);
    await sut.refused(
      'createPosTransaction',
      { key: other.posKey, json: { ...body, terminal: otherTerminal.token } },
      10005,
    );
  });

  it('10006 for a disconnected terminal; GET then shows DEVICE_NOT_CONNECTED', async () => {
    const terminal = await sut.terminal(merchant.merchantId, { connected: false });
    const body = payment(terminal.token);
    await sut.refused('createPosTransaction', { key: merchant.posKey, json: body }, 10006);
    const read = await sut.call('getPosTransaction', {
      key: merchant.posKey,
      params: { transactionId: body.transaction_id as string },
    });
    expect(read.body).toMatchObject({ status: 'DEVICE_NOT_CONNECTED' });
    await sut.refused('createPosTransaction', { key: merchant.posKey, json: body }, 10006);
  });

  it('10006 on GET of a payment in flight whose terminal has since disconnected', async () => {
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
    });
    const body = payment(terminal.token);
    const held = create(body);
    await sut.shown(terminal.token);
    const params = { transactionId: body.transaction_id as string };
    const patched = await sut.card.control('PATCH', `/sandbox/pos/terminals/${terminal.token}`, {
      connected: false,
    });
    expect(patched.status).toBe(200);
    await sut.refused('getPosTransaction', { key: merchant.posKey, params }, 10006);
    await sut.card.control('PATCH', `/sandbox/pos/terminals/${terminal.token}`, {
      connected: true,
    });
    await sut.payer(terminal.token, 'approve');
    expect((await held).body).toMatchObject({ status: 'CAPTURED' });
    const idle = await sut.card.control('POST', `/sandbox/pos/terminals/${terminal.token}/payer`, {
      action: 'approve',
    });
    expect(idle.status).toBe(409);
  });

  it('10008 while the terminal is busy (a fixture, or a payment in flight)', async () => {
    const busy = await sut.terminal(merchant.merchantId, { busy: true });
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: payment(busy.token) },
      10008,
    );
    const terminal = await sut.terminal(merchant.merchantId, {
      outcome: { action: 'never', afterMs: 0 },
    });
    const first = create(payment(terminal.token));
    await sut.shown(terminal.token);
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: payment(terminal.token) },
      10008,
    );
    await sut.payer(terminal.token, 'approve');
    await first;
  });
});

describe('cash-register validation', () => {
  it('takes signed data that match the request', async () => {
    const terminal = await sut.terminal(merchant.merchantId, { cashRegisterValidation: true });
    expect(terminal).toMatchObject({ cash_registry_type: 'VCR', cash_registry_validation: true });
    const metadata = cashRegisterData(terminal, 1340);
    const result = await create(payment(terminal.token, { tip: 100, metadata }));
    expect(result.body).toMatchObject({ status: 'CAPTURED', metadata });
  });

  it('10001 when metadata or one of its required fields is missing, or tid is not EP + 6', async () => {
    const terminal = await sut.terminal(merchant.merchantId, { cashRegisterValidation: true });
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: payment(terminal.token) },
      10001,
    );
    const { uid: _uid, ...withoutUid } = cashRegisterData(terminal, 1240);
    const missing = await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: payment(terminal.token, { metadata: withoutUid }) },
      10001,
    );
    expect(missing['invalid-params']).toEqual([
      { name: 'metadata.uid', reason: expect.any(String) },
    ]);
    const badTid = await sut.refused(
      'createPosTransaction',
      {
        key: merchant.posKey,
        json: payment(terminal.token, {
          metadata: { ...cashRegisterData(terminal, 1240), tid: 'XX123456' },
        }),
      },
      10001,
    );
    expect(badTid['invalid-params']?.map((p) => p.name)).toEqual(['metadata.tid']);
  });

  it('10007 when the amount, the tid or the signature does not match', async () => {
    const terminal = await sut.terminal(merchant.merchantId, { cashRegisterValidation: true });
    const refuse = (metadata: Record<string, string>) =>
      sut.refused(
        'createPosTransaction',
        { key: merchant.posKey, json: payment(terminal.token, { metadata }) },
        10007,
      );
    await refuse(cashRegisterData(terminal, 999));
    await refuse(cashRegisterData({ ...terminal, tid: 'EP000000' }, 1240));
    await refuse({
      ...cashRegisterData(terminal, 1240),
      signature: Buffer.from('forged').toString('base64'),
    });
  });
});

describe('voids', () => {
  const captured = async (terminalToken: string) => {
    const body = payment(terminalToken);
    expect((await create(body)).body).toMatchObject({ status: 'CAPTURED' });
    return body.transaction_id as string;
  };
  const voidOf = (terminal: string, original: string, extra: Record<string, unknown> = {}) => ({
    transaction_id: randomUUID(),
    currency: 'EUR',
    type: 'void',
    terminal,
    original_transaction_id: original,
    ...extra,
  });

  it('voids a captured payment once (amount optional, equal to the original)', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    const original = await captured(terminal.token);
    const result = await create(voidOf(terminal.token, original, { amount: 1240 }));
    expect(result.body).toMatchObject({
      status: 'CAPTURED',
      type: 'void',
      amount: 1240,
      original_transaction_id: original,
    });
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: voidOf(terminal.token, original) },
      10013,
    );
  });

  it('10001 for a void amount other than the original', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    const original = await captured(terminal.token);
    const body = await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: voidOf(terminal.token, original, { amount: 100 }) },
      10001,
    );
    expect(body['invalid-params']?.[0].name).toBe('amount');
  });

  it('10009 without a captured original', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: voidOf(terminal.token, randomUUID()) },
      10009,
    );
  });

  it('10011 from another terminal', async () => {
    const [a, b] = await sut.terminals(merchant.merchantId, { count: 2 });
    const original = await captured(a.token);
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: voidOf(b.token, original) },
      10011,
    );
  });

  it('10012 once the batch is closed', async () => {
    const terminal = await sut.terminal(merchant.merchantId);
    const original = await captured(terminal.token);
    const closed = await sut.card.control(
      'POST',
      `/sandbox/pos/terminals/${terminal.token}/close-batch`,
    );
    expect(closed.body).toEqual({ closedBatch: 1 });
    await sut.refused(
      'createPosTransaction',
      { key: merchant.posKey, json: voidOf(terminal.token, original) },
      10012,
    );
  });

  it('10010 for an original older than 24 hours (clock control)', async () => {
    const own = await PosSandboxClient.start();
    try {
      const m = await own.merchant();
      const terminal = await own.terminal(m.merchantId);
      const body = payment(terminal.token);
      await own.call('createPosTransaction', { key: m.posKey, json: body });
      await own.card.advanceClock(24 * 3600 + 1);
      await own.refused(
        'createPosTransaction',
        { key: m.posKey, json: voidOf(terminal.token, body.transaction_id as string) },
        10010,
      );
    } finally {
      await own.close();
    }
  });
});

describe('terminal lists', () => {
  it('pages 34 terminals by 10: 10, 10, 10, 4', async () => {
    const m = await sut.merchant();
    await sut.terminals(m.merchantId, { count: 34 });
    const sizes = [];
    for (const page of [1, 2, 3, 4, 5]) {
      const answer = await sut.call<{ total_count: number; page: number; items: unknown[] }>(
        'listPosTerminals',
        {
          key: m.posKey,
          query: { page, limit: 10 },
        },
      );
      expect(answer.body).toMatchObject({ total_count: 34, page });
      sizes.push(answer.body.items.length);
    }
    expect(sizes).toEqual([10, 10, 10, 4, 0]);
    await sut.refused('listPosTerminals', { key: m.posKey, query: { page: 0 } }, 10001);
  });

  it('get-pending pages an ERP-linked terminal (limit at most 50, from/to days), 10003 without ERP', async () => {
    const terminal = await sut.terminal(merchant.merchantId, { erpPendingTransactions: 12 });
    const key = merchant.posKey;
    const params = { terminalToken: terminal.token };
    const first = await sut.call<{ total_count: number; items: { type: string }[] }>(
      'listPendingPosTransactions',
      {
        key,
        params,
      },
    );
    expect(first.body.total_count).toBe(12);
    expect(first.body.items).toHaveLength(10);
    expect(first.body.items.map((i) => i.type)).toContain('refund');
    const second = await sut.call<{ items: unknown[] }>('listPendingPosTransactions', {
      key,
      params,
      query: { page: 2 },
    });
    expect(second.body.items).toHaveLength(2);
    await sut.refused('listPendingPosTransactions', { key, params, query: { limit: 51 } }, 10001);
    await sut.refused(
      'listPendingPosTransactions',
      { key, params, query: { from: '2026-01-02', to: '2026-01-01' } },
      10001,
    );
    const today = new Date(sut.sandbox.card.now().getTime() - 5 * 3600_000)
      .toISOString()
      .slice(0, 10);
    const dated = await sut.call<{ total_count: number }>('listPendingPosTransactions', {
      key,
      params,
      query: { from: today, to: today },
    });
    expect(dated.body.total_count).toBeGreaterThan(0);
    expect(dated.body.total_count).toBeLessThan(12);
    const plain = await sut.terminal(merchant.merchantId);
    await sut.refused(
      'listPendingPosTransactions',
      { key, params: { terminalToken: plain.token } },
      10003,
    );
    await sut.refused('listPendingPosTransactions', { key: other.posKey, params }, 10002);
  });
});
