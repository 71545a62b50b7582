import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posCall, posTenant, terminals, type PosTenant } from '../support/pos-gateway.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// A payer takes their time at the terminal while the audit sealer runs: whatever the sealer does to the
// trail meanwhile, the payment ends as the provider decided it, on both sides.

/** Polls `read` until it answers something truthy, or fails after `limitMs`. */
async function eventually<T>(read: () => Promise<T | undefined>, limitMs: number): Promise<T> {
  const until = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > until) throw new Error(`not reached within ${limitMs} ms`);
    await sleep(100);
  }
}

/**
 * Starts a payment whose payer approves after `payerMs`, with the sealer running every
 * `AUDIT_SEAL_INTERVAL_MS`, and checks both sides once the payer acted.
 */
function slowPayer(
  title: string,
  options: { env: Record<string, string>; payerMs: number; holdMs?: number },
) {
  describe(title, () => {
    let database: OwnDatabase;
    let sut: TestGateway;
    let app: PosTenant;
    beforeAll(async () => {
      database = await ownDatabase('payer');
      sut = await startTestGateway({ DATABASE_URL: database.url, ...options.env });
      app = await posTenant(sut);
    }, 120_000);
    afterAll(async () => {
      await sut?.close();
      await database?.drop();
    });
    const sql = <T>(text: string, params: unknown[]) =>
      sut.dataSource.query(text, params) as Promise<T[]>;
    const sealedAccessLog = (id: string) =>
      sql<{ seq: string }>(
        `SELECT seq FROM audit_chain WHERE entry_kind = 'access_log' AND entry_id = $1`,
        [id],
      );

    it(
      `ends CAPTURED at the provider and in Portico, the access-log row completed and sealed`,
      async () => {
        const [terminal] = terminals(sut, app, {
          outcome: { action: 'approve', afterMs: options.payerMs },
          ...(options.holdMs ? { holdMs: options.holdMs } : {}),
        });
        const transactionId = randomUUID();
        const started = Date.now();
        const accepted = await posCall(sut, app, 'POST', '/v1/pos/transactions?wait=0', {
          transactionId,
          amount: 1240,
          currency: 'EUR',
          type: 'payment',
          terminal: terminal.token,
        });
        expect(accepted.statusCode).toBe(202);
        const [row] = await sql<{ id: string }>(
          'SELECT id FROM provider_resources WHERE token = $1',
          [transactionId],
        );
        // The sealer really runs during the wait: the row's first status change is sealed long before
        // the payer acts, while its access-log row (the call still held) is not.
        const [created] = await sql<{ id: string }>(
          'SELECT id FROM status_changes WHERE subject_id = $1 ORDER BY id LIMIT 1',
          [row.id],
        );
        await eventually(
          async () =>
            (
              await sql(
                `SELECT 1 FROM audit_chain WHERE entry_kind = 'status_change' AND entry_id = $1`,
                [created.id],
              )
            ).length > 0,
          options.payerMs / 2,
        );
        const [logRow] = await sql<{ id: string; outcome: string }>(
          `SELECT id, outcome FROM access_log WHERE card_resource_id = $1`,
          [row.id],
        );
        expect(logRow.outcome).toBe('sent');

        const settled = await eventually(async () => {
          const [current] = await sql<{ status: string }>(
            'SELECT status FROM provider_resources WHERE id = $1',
            [row.id],
          );
          return current.status === 'creating' ? undefined : current;
        }, options.payerMs + 30_000);
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(options.payerMs);
        expect(sut.sandbox.pos.transaction(transactionId)?.status).toBe('CAPTURED');
        expect(settled.status).toBe('CAPTURED');
        const history = await sql<{ to_status: string; cause: string }>(
          'SELECT to_status, cause FROM status_changes WHERE subject_id = $1 ORDER BY id',
          [row.id],
        );
        expect(history).toEqual([
          { to_status: 'creating', cause: 'created' },
          { to_status: 'CAPTURED', cause: 'upstream-answered' },
        ]);
        const [completed] = await sql<{
          operation: string;
          outcome: string;
          upstream_status: number;
          latency_ms: number;
          completed_at: Date | null;
        }>(
          'SELECT operation, outcome, upstream_status, latency_ms, completed_at FROM access_log WHERE id = $1',
          [logRow.id],
        );
        expect(completed).toMatchObject({
          operation: 'createPosTransaction',
          outcome: 'ok',
          upstream_status: 200,
          completed_at: expect.any(Date),
        });
        expect(completed.latency_ms).toBeGreaterThanOrEqual(options.payerMs);

        const read = await posCall(sut, app, 'GET', `/v1/pos/transactions/${transactionId}`);
        expect(read.statusCode).toBe(200);
        expect(read.json()).toMatchObject({ transactionId, status: 'CAPTURED' });

        // Sealed with its outcome once completed, and the chain checks out.
        await eventually(async () => (await sealedAccessLog(logRow.id)).length > 0, 30_000);
        const report = await sut.app.get(AuditVerifierService).verify();
        expect(report).toMatchObject({ ok: true });
        expect(sut.logs.filter((line) => line.includes('access log row not completed'))).toEqual(
          [],
        );
      },
      options.payerMs + 90_000,
    );
  });
}

// With the sealer's defaults (every second, 2 s of grace): the sealer used to seal the held call's row
// once the card/open-banking deadline and the grace had passed (22 s with the default deadline of 20 s).
// The deadline is 2 s here, so that the payer acts after 10 s rather than 23 (the default deadline with
// POS_SLOW_PAYER_REAL_TIME=1).
const realTime = process.env.POS_SLOW_PAYER_REAL_TIME === '1';
slowPayer(
  `POS payment: the payer approves after ${realTime ? '23 s' : '10 s'}, past the read deadline and the sealer's grace (default sealer)`,
  {
    env: {
      AUDIT_SEAL_INTERVAL_MS: '1000',
      AUDIT_SEAL_GRACE_MS: '2000',
      UPSTREAM_DEADLINE_MS: realTime ? '20000' : '2000',
      UPSTREAM_POS_DEADLINE_MS: '200000',
    },
    payerMs: realTime ? 23_000 : 10_000,
  },
);

// 170 s of the 200 s POS deadline. Real time with POS_SLOW_PAYER_REAL_TIME=1 (about 3 minutes);
// otherwise every duration is a tenth (sealer every 100 ms with 200 ms of grace, reads 2 s, POS
// deadline 20 s, the provider's hold 18 s, the payer at 17 s): the sealer runs 170 passes meanwhile.
slowPayer(
  `POS payment: the payer approves after 170 s${realTime ? ' (real time)' : ' (a tenth of the time)'}`,
  realTime
    ? {
        env: {
          AUDIT_SEAL_INTERVAL_MS: '1000',
          AUDIT_SEAL_GRACE_MS: '2000',
          UPSTREAM_DEADLINE_MS: '20000',
          UPSTREAM_POS_DEADLINE_MS: '200000',
        },
        payerMs: 170_000,
      }
    : {
        env: {
          AUDIT_SEAL_INTERVAL_MS: '100',
          AUDIT_SEAL_GRACE_MS: '200',
          UPSTREAM_DEADLINE_MS: '2000',
          UPSTREAM_POS_DEADLINE_MS: '20000',
        },
        payerMs: 17_000,
        holdMs: 18_000,
      },
);

describe('POS payment: its access-log row cannot be completed', () => {
  let database: OwnDatabase;
  let sut: TestGateway;
  let app: PosTenant;
  beforeAll(async () => {
    database = await ownDatabase('payer');
    sut = await startTestGateway({ DATABASE_URL: database.url, AUDIT_SEAL_INTERVAL_MS: '0' });
    app = await posTenant(sut);
  }, 120_000);
  afterAll(async () => {
    await sut?.close({
      unchecked:
        'the row of its call is sealed behind its back (a forged link) on purpose: it keeps sent',
    });
    await database?.drop();
  });

  it('still ends as the provider answered (CAPTURED); the row keeps `sent`, logged and counted', async () => {
    const [terminal] = terminals(sut, app, { outcome: { action: 'approve', afterMs: 1000 } });
    const transactionId = randomUUID();
    const accepted = await posCall(sut, app, 'POST', '/v1/pos/transactions?wait=0', {
      transactionId,
      amount: 990,
      currency: 'EUR',
      type: 'payment',
      terminal: terminal.token,
    });
    expect(accepted.statusCode).toBe(202);
    // Sealed behind the gateway's back while the call is held: the trigger refuses its completion.
    const logRow = await eventually(async () => {
      const [written] = (await sut.dataSource.query(
        `SELECT a.id, a.tenant_id, a.created_at::text AS created_at FROM access_log a JOIN provider_resources r ON r.id = a.card_resource_id
          WHERE r.token = $1`,
        [transactionId],
      )) as { id: string; tenant_id: string; created_at: string }[];
      return written;
    }, 5000);
    await sut.dataSource.query(
      `INSERT INTO audit_chain (seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash, entry_at)
       VALUES (1, 'access_log', $1, $2, $3, $3, $4)`,
      [logRow.id, logRow.tenant_id, '0'.repeat(64), logRow.created_at],
    );
    const settled = await eventually(async () => {
      const answer = await posCall(sut, app, 'GET', `/v1/pos/transactions/${transactionId}`);
      return answer.json().status === 'CAPTURED' ? answer : undefined;
    }, 15_000);
    expect(settled.statusCode).toBe(200);
    expect(sut.sandbox.pos.transaction(transactionId)?.status).toBe('CAPTURED');
    // Settled by the call's answer or by a GET's read at the provider, whichever came first.
    const history = (await sut.dataSource.query(
      `SELECT s.to_status FROM status_changes s JOIN provider_resources r ON r.id = s.subject_id
        WHERE r.token = $1 ORDER BY s.id`,
      [transactionId],
    )) as { to_status: string }[];
    expect(history.map((change) => change.to_status)).toEqual(['creating', 'CAPTURED']);
    const [row] = (await sut.dataSource.query('SELECT outcome FROM access_log WHERE id = $1', [
      logRow.id,
    ])) as { outcome: string }[];
    expect(row.outcome).toBe('sent');
    expect(sut.logs.filter((line) => line.includes('access log row not completed'))).toHaveLength(
      1,
    );
    const metric = await sut.app
      .get(Metrics)
      .registry.getSingleMetricAsString('portico_access_log_not_completed_total');
    expect(metric).toMatch(/^portico_access_log_not_completed_total 1$/m);
  });
});
