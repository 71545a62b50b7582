import { afterAll, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testDatabaseUrl } from '../../support/test-gateway.js';
import { CardSandboxClient } from '../../support/card-api.js';
import { payment, PosSandboxClient } from '../../support/pos-api.js';

const schema = `sandbox_pos_${randomBytes(4).toString('hex')}`;
const start = async () =>
  new PosSandboxClient(
    await CardSandboxClient.start({ posPort: 0, database: { url: testDatabaseUrl(), schema } }),
  );

afterAll(async () => {
  const db = new pg.Client({ connectionString: testDatabaseUrl() });
  await db.connect();
  await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await db.end();
});

it('keeps POS keys, terminals and results across a restart; a payment in flight is cancelled', async () => {
  let sut = await start();
  const merchant = await sut.merchant();
  const [done, held] = await sut.terminals(merchant.merchantId, { count: 2 });
  sut.sandbox.pos.changeTerminal(held.token, { outcome: { action: 'never', afterMs: 0 } });
  const captured = payment(done.token);
  await sut.call('createPosTransaction', { key: merchant.posKey, json: captured });
  const inFlight = payment(held.token);
  void sut
    .send('createPosTransaction', { key: merchant.posKey, json: inFlight })
    .catch(() => undefined);
  await sut.shown(held.token);
  await sut.sandbox.pos.persisted();
  // The sandbox first: it ends the held request, which the client's pool would otherwise wait for.
  await sut.sandbox.close();
  await sut.card.agent.close();

  sut = await start();
  try {
    const read = (transactionId: string) =>
      sut.call('getPosTransaction', { key: merchant.posKey, params: { transactionId } });
    expect((await read(captured.transaction_id as string)).body).toMatchObject({
      status: 'CAPTURED',
    });
    expect((await read(inFlight.transaction_id as string)).body).toEqual({ status: 'CANCELLED' });
    const listed = await sut.call<{ total_count: number }>('listPosTerminals', {
      key: merchant.posKey,
    });
    expect(listed.body.total_count).toBe(2);
    // The terminal is free again.
    expect(
      (await sut.call('createPosTransaction', { key: merchant.posKey, json: payment(done.token) }))
        .status,
    ).toBe(200);
  } finally {
    await sut.close();
  }
});
