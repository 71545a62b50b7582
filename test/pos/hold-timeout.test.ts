import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { posCall, posTenant, terminals, type PosTenant } from '../support/pos-gateway.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// Seed 001: "A cancelled or timed-out transaction returns just { status: CANCELLED } with HTTP 200". The
// provider holds a payment 180 s and Portico's POS deadline is 200 s: a payment nobody acts on must end
// CANCELLED on both sides within the deadline and stay so after it. Real time with
// POS_SLOW_PAYER_REAL_TIME=1 (about 4 minutes); otherwise a tenth of it (hold 18 s, deadline 20 s).
const realTime = process.env.POS_SLOW_PAYER_REAL_TIME === '1';
const holdMs = realTime ? 180_000 : 18_000;
const deadlineMs = realTime ? 200_000 : 20_000;

let sut: TestGateway;
let app: PosTenant;

beforeAll(async () => {
  sut = await startTestGateway({
    UPSTREAM_POS_DEADLINE_MS: String(deadlineMs),
    UPSTREAM_DEADLINE_MS: String(deadlineMs / 10),
  });
  app = await posTenant(sut);
}, 120_000);
afterAll(() => sut?.close());

const sql = <T>(text: string, params: unknown[]) =>
  sut.dataSource.query(text, params) as Promise<T[]>;

describe(`POS payment nobody acts on (hold ${holdMs / 1000} s, POS deadline ${deadlineMs / 1000} s)`, () => {
  it(
    'ends CANCELLED when the hold runs out, recorded from the provider`s answer before the deadline, and stays CANCELLED past it',
    async () => {
      const [terminal] = terminals(sut, app, { outcome: { action: 'never', afterMs: 0 }, holdMs });
      const transactionId = randomUUID();
      const body = {
        transactionId,
        amount: 1240,
        currency: 'EUR',
        type: 'payment',
        terminal: terminal.token,
      };
      const started = Date.now();
      const accepted = await posCall(sut, app, 'POST', '/v1/pos/transactions?wait=0', body);
      expect(accepted.statusCode).toBe(202);
      const [{ id }] = await sql<{ id: string }>(
        'SELECT id FROM provider_resources WHERE token = $1',
        [transactionId],
      );
      const status = async () =>
        (
          await sql<{ status: string }>('SELECT status FROM provider_resources WHERE id = $1', [id])
        )[0].status;
      let settled = await status();
      while (settled === 'creating' && Date.now() - started < deadlineMs + 10_000) {
        await sleep(100);
        settled = await status();
      }
      const elapsed = Date.now() - started;
      expect(settled).toBe('CANCELLED');
      expect(elapsed).toBeGreaterThanOrEqual(holdMs);
      expect(elapsed).toBeLessThan(deadlineMs);
      const history = () =>
        sql<{ to_status: string; cause: string }>(
          'SELECT to_status, cause FROM status_changes WHERE subject_id = $1 ORDER BY id',
          [id],
        );
      expect(await history()).toEqual([
        { to_status: 'creating', cause: 'created' },
        { to_status: 'CANCELLED', cause: 'upstream-answered' },
      ]);
      const [log] = await sql<{ outcome: string; upstream_status: number }>(
        `SELECT outcome, upstream_status FROM access_log WHERE card_resource_id = $1 AND operation = 'createPosTransaction'`,
        [id],
      );
      expect(log).toEqual({ outcome: 'ok', upstream_status: 200 });
      // Over at the terminal too: it shows nothing, and a payer's late approval has nothing to approve.
      expect(sut.sandbox.pos.terminal(terminal.token)?.current).toBeUndefined();
      expect(typeof sut.sandbox.pos.payer(terminal.token, 'approve')).toBe('string');

      await sleep(Math.max(0, started + deadlineMs + 1_000 - Date.now()));
      expect(sut.sandbox.pos.transaction(transactionId)?.status).toBe('CANCELLED');
      const read = await posCall(sut, app, 'GET', `/v1/pos/transactions/${transactionId}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toMatchObject({ status: 'CANCELLED' });
      const repeat = await posCall(sut, app, 'POST', '/v1/pos/transactions?wait=0', body);
      expect(repeat.statusCode).toBe(200);
      expect(repeat.json()).toMatchObject({ status: 'CANCELLED' });
      expect(await status()).toBe('CANCELLED');
      expect((await history()).map((change) => change.to_status)).toEqual([
        'creating',
        'CANCELLED',
      ]);
      // The terminal is free for the next payment.
      sut.sandbox.pos.changeTerminal(terminal.token, {
        outcome: { action: 'approve', afterMs: 0 },
      });
      const next = await posCall(sut, app, 'POST', '/v1/pos/transactions', {
        ...body,
        transactionId: randomUUID(),
      });
      expect(next.json()).toMatchObject({ status: 'CAPTURED' });
    },
    deadlineMs + 120_000,
  );
});
