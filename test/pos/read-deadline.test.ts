import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posCall, posTenant, shown, terminals, type PosTenant } from '../support/pos-gateway.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// Only the payment call waits for the payer; every other POS call has the read deadline (2 s here),
// against a provider that hangs, with the audit sealer running as in production.
const READ_DEADLINE_MS = 2000;
const POS_DEADLINE_MS = 200_000;

describe('POS reads against a hung provider', () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let app: PosTenant;
  beforeAll(async () => {
    database = await ownDatabase('posread');
    sut = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_DEADLINE_MS: String(READ_DEADLINE_MS),
      UPSTREAM_POS_DEADLINE_MS: String(POS_DEADLINE_MS),
      AUDIT_SEAL_INTERVAL_MS: '100',
      AUDIT_SEAL_GRACE_MS: '0',
    });
    app = await posTenant(sut);
  }, 120_000);
  afterAll(async () => {
    sut?.sandbox.chaos.clear();
    await sut?.close();
    await database?.drop();
  });

  const timed = async (url: string) => {
    const started = Date.now();
    const answer = await posCall(sut, app, 'GET', url);
    return { answer, ms: Date.now() - started };
  };
  const accessRows = (operation: string) =>
    sut.dataSource.query(
      'SELECT outcome, completed_at FROM access_log WHERE tenant_id = $1 AND operation = $2',
      [app.tenantId, operation],
    ) as Promise<{ outcome: string; completed_at: Date | null }[]>;

  it('GET /v1/pos/terminals answers 504 upstream-timeout (problem+json) within the read deadline', async () => {
    const [terminal] = terminals(sut, app);
    sut.sandbox.chaos.add({ operation: 'listPosTerminals', fault: 'hang', times: 2 });
    sut.sandbox.chaos.add({ operation: 'listPendingPosTransactions', fault: 'hang', times: 2 });
    for (const url of ['/v1/pos/terminals', `/v1/pos/terminals/${terminal.token}/pending`]) {
      const { answer, ms } = await timed(url);
      expect(answer.statusCode).toBe(504);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({
        status: 504,
        type: 'urn:portico:problem:upstream-timeout',
        upstream: { failure: 'timeout' },
      });
      // The read deadline (retry included), not the POS payment's 200 s.
      expect(ms).toBeGreaterThanOrEqual(READ_DEADLINE_MS - 50);
      expect(ms).toBeLessThan(READ_DEADLINE_MS + 3000);
    }
    // Each call's row is completed with its outcome (never left `sent`, never sealed before that).
    for (const operation of ['listPosTerminals', 'listPendingPosTransactions'])
      expect(await accessRows(operation)).toEqual([
        { outcome: 'unknown:504', completed_at: expect.any(Date) },
      ]);
    sut.sandbox.chaos.clear();
    expect((await timed('/v1/pos/terminals')).answer.statusCode).toBe(200);
  });

  it('reading a transaction in flight while the provider hangs answers within the read deadline', async () => {
    const [terminal] = terminals(sut, app, { outcome: { action: 'never', afterMs: 0 } });
    const transactionId = randomUUID();
    const accepted = await posCall(sut, app, 'POST', '/v1/pos/transactions?wait=0', {
      transactionId,
      amount: 500,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    });
    expect(accepted.statusCode).toBe(202);
    await shown(sut, terminal.token);
    sut.sandbox.chaos.add({ operation: 'getPosTransaction', fault: 'hang' });
    const { answer, ms } = await timed(`/v1/pos/transactions/${transactionId}`);
    sut.sandbox.chaos.clear();
    // Still in flight at the terminal: the transaction as Portico last knew it, never a 5xx.
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ transactionId, status: 'INITIATING' });
    expect(ms).toBeGreaterThanOrEqual(READ_DEADLINE_MS - 50);
    expect(ms).toBeLessThan(READ_DEADLINE_MS + 3000);
    sut.sandbox.pos.payer(terminal.token, 'approve');
    for (let status = ''; status !== 'CAPTURED'; await sleep(20))
      status = (await timed(`/v1/pos/transactions/${transactionId}`)).answer.json()
        .status as string;
  });

  it('the payment call itself still waits for the payer past the read deadline', async () => {
    const payerMs = READ_DEADLINE_MS * 2;
    const [terminal] = terminals(sut, app, { outcome: { action: 'approve', afterMs: payerMs } });
    const started = Date.now();
    const answer = await posCall(sut, app, 'POST', '/v1/pos/transactions?wait=10', {
      transactionId: randomUUID(),
      amount: 700,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ status: 'CAPTURED' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(payerMs);
  });
});
