import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AccessLogService } from '../../src/audit/trail/access-log.service.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// Rows begun, completed and recorded by concurrent calls are written by group statements: each call
// must still get, and complete, its own row.
describe('access-log rows written in groups', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it('gives each of many concurrent calls its own written-ahead row, and completes that row', async () => {
    const sut = gateway.app.get(AccessLogService);
    const { tenantId } = await gateway.newTenantWithKey('app');
    const calls = Array.from({ length: 60 }, (_, i) => `account-${i}`);
    await Promise.all(
      calls.map(async (accountId, i) => {
        const id = await sut.begin({
          tenantId,
          operation: 'getAccountBalances',
          accountId,
          psuPresent: i % 2 === 0,
        });
        await sut.complete(id, { outcome: `ok:${accountId}`, upstreamStatus: 200, latencyMs: i });
      }),
    );
    await Promise.all(
      calls.map((accountId, i) =>
        sut.record(
          { tenantId, operation: 'listAccounts', accountId, psuPresent: false },
          { outcome: `refused:${accountId}`, latencyMs: i },
        ),
      ),
    );
    const rows: {
      operation: string;
      account_id: string;
      outcome: string;
      latency_ms: number;
      psu_present: boolean;
      completed_at: Date | null;
    }[] = await gateway.dataSource.query(
      `SELECT operation, account_id, outcome, latency_ms, psu_present, completed_at
         FROM access_log WHERE tenant_id = $1`,
      [tenantId],
    );
    expect(rows).toHaveLength(120);
    for (const row of rows) {
      const i = Number(row.account_id.slice('account-'.length));
      const kind = row.operation === 'getAccountBalances' ? 'ok' : 'refused';
      expect(row).toMatchObject({ outcome: `${kind}:${row.account_id}`, latency_ms: i });
      expect(row.completed_at).not.toBeNull();
      if (kind === 'ok') expect(row.psu_present).toBe(i % 2 === 0);
    }
  });
});
