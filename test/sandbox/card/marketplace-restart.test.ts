import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CardSandboxClient } from '../../support/card-api.js';
import { Marketplace } from '../../support/marketplace.js';
import { testDatabaseUrl } from '../../support/test-gateway.js';

describe('the marketplace keeps its ledger in the sandbox schema across restarts', () => {
  const schema = `sandbox_market_${randomBytes(4).toString('hex')}`;
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.end();
  });

  it('carries on after a restart: sellers, transfers on hold, reversals, payouts, balances and entries', async () => {
    const database = { url: testDatabaseUrl(), schema };
    let client = await CardSandboxClient.start({ database });
    let sut = await Marketplace.open(client);
    const seller = (await sut.seller(1)).token as string;
    const paid = await sut.payment(10_000);
    const held = await sut.transfer(paid.token, {
      seller,
      amount: 4_000,
      commission_amount: 400,
      on_hold: 1,
    });
    const open = await sut.transfer(paid.token, { seller, amount: 2_000, commission_amount: 200 });
    await sut.ok('createReversal', { form: { transfer: open.token, amount: 500 } });
    const before = {
      balance: await sut.balance(),
      seller: await sut.sellerBalance(seller),
      transfer: await sut.ok('retrieveTransfer', { params: { transferId: open.token } }),
    };
    await client.close();

    client = await CardSandboxClient.start({ database });
    try {
      sut = new Marketplace(client, sut.merchant);
      expect(await sut.balance()).toEqual(before.balance);
      expect(await sut.sellerBalance(seller)).toBe(before.seller);
      expect(await sut.ok('retrieveTransfer', { params: { transferId: open.token } })).toEqual(
        before.transfer,
      );
      expect(await sut.invariants()).toEqual({ ok: true, violations: [] });
      await sut.ok('updateTransfer', { params: { transferId: held.token }, form: { on_hold: 0 } });
      const today = ((await client.control('GET', '/sandbox/card/clock')).body as { now: string })
        .now;
      const run = await sut.runPayouts(today.slice(0, 10));
      const payout = await sut.ok('retrievePayout', { params: { payoutId: run.created[0] } });
      expect(payout.amount).toBe(3_600 + 1_800 - 450);
      expect(await sut.invariants()).toEqual({ ok: true, violations: [] });
    } finally {
      await client.close();
    }
  });
});
