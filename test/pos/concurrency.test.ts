import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { posCall, posTenant, shown, terminals, type PosTenant } from '../support/pos-gateway.js';

let sut: TestGateway;
let app: PosTenant;

beforeAll(async () => {
  // The facade holds each payment open for up to two minutes: only the payer ends them here.
  sut = await startTestGateway({ POS_SYNC_WAIT_MS: '120000' });
  app = await posTenant(sut);
  // A gateway start took over a minute on a machine running the other tiers as well.
}, 120_000);
afterAll(() => sut?.close());

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Other facade calls, one after another: the POS terminals list and card payments list (both upstream). */
async function otherCalls(count: number): Promise<{ statuses: number[]; ms: number[] }> {
  const statuses: number[] = [];
  const ms: number[] = [];
  for (let i = 0; i < count; i++)
    for (const url of ['/v1/pos/terminals?limit=5', '/v1/card/payments?count=5', '/v1/me']) {
      const started = performance.now();
      const answer = await posCall(sut, app, 'GET', url);
      ms.push(performance.now() - started);
      statuses.push(answer.statusCode);
    }
  return { statuses, ms };
}

it('holds 30 POS payments open on 30 terminals while other facade calls keep answering', async () => {
  const held = terminals(sut, app, { count: 30, outcome: { action: 'never', afterMs: 0 } });
  const before = await otherCalls(10);
  let answered = 0;
  const payments = held.map((terminal) =>
    posCall(sut, app, 'POST', '/v1/pos/transactions', {
      transactionId: randomUUID(),
      amount: 500,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    }).then((answer) => {
      answered++;
      return answer;
    }),
  );
  for (const terminal of held) await shown(sut, terminal.token);
  const during = await otherCalls(10);
  // Every other call answered while all 30 payments were still held open.
  expect(answered).toBe(0);
  expect(during.statuses).toEqual(Array(30).fill(200));
  process.stdout.write(
    `other facade calls, median ms: before ${median(before.ms).toFixed(1)}, with 30 POS payments held ${median(during.ms).toFixed(1)} (max ${Math.max(...during.ms).toFixed(1)})\n`,
  );
  for (const terminal of held) sut.sandbox.pos.payer(terminal.token, 'approve');
  const results = await Promise.all(payments);
  expect(results.map((r) => [r.statusCode, r.json().status])).toEqual(
    held.map(() => [200, 'CAPTURED']),
  );
});
