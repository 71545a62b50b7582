import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { domesticPayment } from '../support/fixtures.js';
import { ReconciliationProcess } from '../support/reconciliation-process.js';

/** Open-banking payments that the bank settled without telling Portico: three batches of reads by id. */
const PAYMENTS = 60;

/**
 * kill -9 of a gateway process in the middle of a by-id reconciliation run (open banking, the
 * scheduler's rolling window): the next process marks the run interrupted once its lease lapses, runs
 * the window again, and each payment is moved once (one history row of cause `reconciled`, one event).
 */
describe('reconciliation by id: kill -9 in the middle of a run', () => {
  const rig = new ReconciliationProcess('recon_crash_by_id', {
    PROVIDER_SYNC_INTERVAL_MS: '0',
    // A batch of 20 reads takes 2 s, well within the lease it renews.
    RECONCILIATION_REQUESTS_PER_SECOND: '10',
    RECONCILIATION_LEASE_MS: '5000',
  });
  const start = (intervalMs?: string) => rig.start(intervalMs);
  const query = <T>(sql: string, params: unknown[] = []) => rig.query<T>(sql, params);
  const until = (condition: () => Promise<boolean>, limitMs: number) =>
    rig.until(condition, limitMs);
  const count = async (sql: string) => Number((await query<{ n: string }>(sql))[0].n);
  const moves = () => count("SELECT count(*) AS n FROM status_changes WHERE cause = 'reconciled'");

  beforeAll(() => rig.open(), 60_000);
  afterAll(() => rig.close());

  it('moves each payment the bank settled once, the killed run interrupted and its window run again', async () => {
    // The demo tenant initiates the payments at the first start (reconciliation off); the bank then
    // settles them in its back office; then the gateway runs with reconciliation on.
    const key = await start('0');
    for (let n = 0; n < PAYMENTS; n++) {
      const made = await request(`http://127.0.0.1:${rig.port}/v1/payments`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': randomUUID(),
          'content-type': 'application/json',
        },
        body: JSON.stringify(domesticPayment()),
      });
      expect(made.statusCode === 201 ? 201 : await made.body.text()).toBe(201);
      await made.body.dump();
    }
    const bankIds = await query<{ id: string; bank: string }>(
      "SELECT id, upstream_payment_id AS bank FROM payments WHERE status = 'RCVD'",
    );
    expect(bankIds).toHaveLength(PAYMENTS);
    for (const { bank } of bankIds) {
      const settled = await request(`${rig.sandbox.scaUrl}/sandbox/payments/${bank}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'ACSC' }),
      });
      expect(settled.statusCode).toBe(204);
      await settled.body.dump();
    }
    rig.gateway!.child.kill('SIGTERM');
    await rig.gateway!.exited;

    await start();
    await until(async () => (await moves()) > 0, 60_000);
    // Counted before the kill: on the embedded engine, a query between the kill and the next start would
    // start the engine in the test's process.
    const atKill = await moves();
    rig.gateway!.child.kill('SIGKILL');
    expect((await rig.gateway!.exited).signal).toBe('SIGKILL');
    rig.gateway = undefined;
    expect(atKill).toBeLessThan(PAYMENTS);

    await start();
    const runs = async () =>
      query<{ status: string; counts: { moved: number } | null; started_at: Date }>(
        `SELECT status, counts, started_at FROM reconciliation_runs
          WHERE capability = 'open-banking' AND trigger = 'recent' ORDER BY started_at`,
      );
    await until(async () => (await runs()).some((run) => run.status === 'succeeded'), 90_000);

    // One move per payment, one history row and one event each, whichever process made it.
    const history = await query<{ subject_id: string; n: string; to_status: string }>(
      `SELECT subject_id, count(*) AS n, min(to_status) AS to_status FROM status_changes
        WHERE cause = 'reconciled' GROUP BY subject_id`,
    );
    expect(history).toHaveLength(PAYMENTS);
    expect(history.every((row) => row.n === '1' && row.to_status === 'ACSC')).toBe(true);
    expect(
      await count(
        "SELECT count(*) AS n FROM payments WHERE status = 'ACSC' AND id IN (SELECT subject_id FROM status_changes WHERE cause = 'reconciled')",
      ),
    ).toBe(PAYMENTS);
    const events = await query<{ payment_id: string; n: string }>(
      `SELECT (body::jsonb)->'data'->>'paymentId' AS payment_id, count(*) AS n FROM webhook_events
        WHERE type = 'payment.status_changed' AND (body::jsonb)->'data'->>'cause' = 'reconciled'
        GROUP BY 1`,
    );
    expect(events).toHaveLength(PAYMENTS);
    expect(events.every((row) => row.n === '1')).toBe(true);

    // The killed run says so; the one that finished counts the moves it made, not the killed one's.
    const all = await runs();
    expect(all[0].status).toBe('interrupted');
    const done = all.find((run) => run.status === 'succeeded')!;
    const movedBefore = (
      await query<{ n: string }>(
        "SELECT count(*) AS n FROM status_changes WHERE cause = 'reconciled' AND changed_at < $1",
        [done.started_at],
      )
    )[0].n;
    expect(done.counts!.moved).toBe(PAYMENTS - Number(movedBefore));
  }, 300_000);
});
