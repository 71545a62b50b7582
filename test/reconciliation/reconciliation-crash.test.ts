import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { ReconciliationProcess } from '../support/reconciliation-process.js';

/** Payments made in the merchant's dashboard: three pages of the provider's list. */
const PAYMENTS = 50;

/**
 * kill -9 of a gateway process in the middle of a reconciliation run (the scheduler's rolling window,
 * one provider call a second): the next process marks the run interrupted once its lease lapses, runs
 * the window again, and every payment made at the provider is adopted once.
 */
describe('reconciliation: kill -9 in the middle of a run', () => {
  const rig = new ReconciliationProcess('recon_crash', {
    RECONCILIATION_REQUESTS_PER_SECOND: '1',
    RECONCILIATION_LEASE_MS: '3000',
  });
  const start = (intervalMs?: string) => rig.start(intervalMs);
  const query = <T>(sql: string, params: unknown[] = []) => rig.query<T>(sql, params);
  const until = (condition: () => Promise<boolean>, limitMs: number) =>
    rig.until(condition, limitMs);
  const adopted = async () =>
    Number(
      (
        await query<{ n: string }>(
          "SELECT count(*) AS n FROM provider_resources WHERE origin = 'provider' AND kind = 'payment'",
        )
      )[0].n,
    );

  beforeAll(() => rig.open(), 60_000);
  afterAll(() => rig.close());

  it('adopts every payment made at the provider once, the killed run interrupted and its window run again', async () => {
    // The demo tenant's merchant, given at the first start (reconciliation off), pays 50 times in its
    // dashboard; then the gateway runs with reconciliation on.
    await start('0');
    const [{ merchant_id: merchantId }] = await query<{ merchant_id: string }>(
      "SELECT c.merchant_id FROM card_credentials c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = 'demo'",
    );
    for (let n = 0; n < PAYMENTS; n++) {
      const made = await request(
        `${rig.sandbox.scaUrl}/sandbox/card/merchants/${merchantId}/dashboard/payments`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount: 1_000 + n }),
        },
      );
      expect(made.statusCode).toBe(200);
      await made.body.dump();
    }
    rig.gateway!.child.kill('SIGTERM');
    await rig.gateway!.exited;
    await start();
    await until(async () => (await adopted()) > 0, 60_000);
    const atKill = await adopted();
    rig.gateway!.child.kill('SIGKILL');
    expect((await rig.gateway!.exited).signal).toBe('SIGKILL');
    rig.gateway = undefined;
    expect(atKill).toBeLessThan(PAYMENTS);

    await start();
    await until(async () => {
      const done = await query(
        "SELECT 1 FROM reconciliation_runs WHERE capability = 'card' AND trigger = 'recent' AND status = 'succeeded'",
      );
      return done.length > 0;
    }, 90_000);
    const rows = await query<{ token: string; n: string; status: string }>(
      `SELECT token, count(*) AS n, min(status) AS status FROM provider_resources
        WHERE kind = 'payment' AND origin = 'provider' GROUP BY token`,
    );
    expect(rows).toHaveLength(PAYMENTS);
    expect(rows.every((row) => row.n === '1' && row.status === 'Captured')).toBe(true);
    const runs = await query<{ status: string }>(
      "SELECT status FROM reconciliation_runs WHERE capability = 'card' AND trigger = 'recent' ORDER BY started_at",
    );
    expect(runs.map((run) => run.status)).toContain('interrupted');
  }, 240_000);
});
