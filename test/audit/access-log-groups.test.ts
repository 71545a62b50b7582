import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { statementsSent } from '#src/platform/database/statement-counter.js';
import { approvedConsent } from '../support/consent-flow.js';
import { porticoClient } from '../support/inject-fetch.js';
import { bankCallCount, startTestGateway, type TestGateway } from '../support/test-gateway.js';

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

  // The admission statement writes the row of a call that may go to the bank (rate limit, consent read
  // and row in one round-trip); a call refused after it is still one row, completed with the refusal.
  it('leaves one row per facade call, written ahead or recorded, whatever the call ended in', async () => {
    const { tenantId, key } = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const api = porticoClient(gateway, key);
    const read = (consent: string, account: string) =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: {
          header: { 'Consent-ID': consent, 'PSU-IP-Address': '192.0.2.1' },
          path: { accountId: account },
        },
      });
    const unknownConsent = '00000000-0000-4000-8000-000000000000';
    const bankBefore = bankCallCount(gateway);
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => read(consentId, accountId)),
      ...Array.from({ length: 8 }, () => read(consentId, 'acc-not-in-this-consent')),
      ...Array.from({ length: 5 }, () => read(unknownConsent, accountId)),
    ]);
    const expected = [
      ...Array.from({ length: 12 }, () => [200, 'ok']),
      ...Array.from({ length: 8 }, () => [403, 'refused:RESOURCE_UNKNOWN']),
      ...Array.from({ length: 5 }, () => [404, 'refused:CONSENT_UNKNOWN']),
    ];
    expect(answers.map((answer) => answer.response.status)).toEqual(expected.map(([s]) => s));
    expect(bankCallCount(gateway) - bankBefore).toBe(12);

    // Answered reads complete their rows after the answer; the auditor's views write them first.
    await gateway.app.get(AccessLogService).flushCompletions();
    const rows: { request_id: string; outcome: string; consent_id: string | null }[] =
      await gateway.dataSource.query(
        `SELECT request_id, outcome, consent_id FROM access_log
          WHERE tenant_id = $1 AND operation = 'getAccountBalances'`,
        [tenantId],
      );
    expect(rows).toHaveLength(answers.length);
    answers.forEach((answer, i) => {
      const requestId = answer.response.headers.get('x-request-id');
      const mine = rows.filter((row) => row.request_id === requestId);
      expect(mine.map((row) => row.outcome)).toEqual([expected[i][1]]);
      expect(mine[0].consent_id).toBe(i < 20 ? consentId : null);
    });
  });

  // An answered read completes its row after the answer, carried by the next call's admission: one
  // statement per read when calls follow each other (two when every completion went on its own).
  it('completes the row of an answered read with the next admission, not by a statement of its own', async () => {
    const { tenantId, key } = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const api = porticoClient(gateway, key);
    const read = () =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: {
          header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.1' },
          path: { accountId },
        },
      });
    await read(); // the key and the statements warm
    await gateway.app.get(AccessLogService).flushCompletions();
    const reads = 30;
    const before = statementsSent();
    for (let i = 0; i < reads; i++) expect((await read()).response.status).toBe(200);
    const statements = statementsSent() - before;
    await gateway.app.get(AccessLogService).flushCompletions();
    process.stdout.write(`${reads} reads one after another: ${statements} statements\n`);
    // A completion that waited past COMPLETION_DELAY_MS for the next read went alone: allowed for a few.
    expect(statements).toBeLessThan(reads * 1.5);
    const rows: { outcome: string }[] = await gateway.dataSource.query(
      `SELECT outcome FROM access_log WHERE tenant_id = $1 AND operation = 'getAccountBalances'`,
      [tenantId],
    );
    expect(rows.map((row) => row.outcome)).toEqual(rows.map(() => 'ok'));
    expect(rows).toHaveLength(reads + 1);
  });
});
