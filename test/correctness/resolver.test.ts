import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { InDoubtResolver } from '#src/platform/in-doubt/in-doubt-settlers.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { createBankConsent } from '../support/sandbox-api.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

// The file's own database: its resolvers would otherwise work other test files' rows in doubt (and
// theirs its rows), each against a sandbox that does not know the other's consents.
let database: OwnDatabase;
beforeAll(async () => {
  database = await ownDatabase('resolver');
});
afterAll(() => database.drop());

// Two replicas on one database settle the same rows in doubt: each row is worked exactly once.
describe('the resolver of writes in doubt', () => {
  let first: TestGateway;
  let second: TestGateway;
  beforeAll(async () => {
    first = await startTestGateway({ DATABASE_URL: database.url, RESOLVER_INTERVAL_MS: '0' });
    second = await startTestGateway({
      DATABASE_URL: database.url,
      UPSTREAM_OB_BASE_URL: first.sandbox.openBankingUrl,
      RESOLVER_INTERVAL_MS: '0',
    });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('settles each in-doubt consent once when two gateway processes resolve at the same time', async () => {
    const { tenantId } = await first.newTenantWithKey('app');
    // Rows other tests left in doubt in the shared database are leased (60 s) by this pass, not the next.
    await first.app.get(InDoubtResolver).resolveOnce();
    const tpp = transportTo(first.sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const created = await createBankConsent(tpp);
      const id = randomUUID();
      ids.push(id);
      await first.dataSource.query(
        `INSERT INTO consents (id, tenant_id, kind, brand_id, upstream_consent_id, requested_access, status, redirect_uri, created_at)
         VALUES ($1, $2, 'ais', 'danube-bank', $3, '{}', 'unknown', 'https://app.example/r', now() - interval '1 minute')`,
        [id, tenantId, created.body?.consentId],
      );
    }
    await tpp.close();
    const before = first.sandbox.bank.control.calls().getConsentStatus ?? 0;

    await Promise.all([
      first.app.get(InDoubtResolver).resolveOnce(),
      second.app.get(InDoubtResolver).resolveOnce(),
    ]);

    const statuses = await first.dataSource.query(
      `SELECT status, count(*)::int AS n FROM consents WHERE id = ANY($1) GROUP BY status`,
      [ids],
    );
    expect(statuses).toEqual([{ status: 'received', n: 12 }]);
    const changes = await first.dataSource.query(
      `SELECT subject_id, count(*)::int AS n FROM status_changes WHERE subject_id = ANY($1) GROUP BY subject_id`,
      [ids],
    );
    expect(changes.map((row: { n: number }) => row.n)).toEqual(Array(12).fill(1));
    // Each row read from the bank once: the lease kept the other replica off it.
    expect((first.sandbox.bank.control.calls().getConsentStatus ?? 0) - before).toBe(12);
  });
});

// The pass at start (RECONCILE_ON_START) and the periodic passes after it: a write that falls in doubt
// after the start is settled by a later pass.
describe('the resolver after its pass at start', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      RECONCILE_ON_START: 'true',
      RESOLVER_INTERVAL_MS: '200',
      UPSTREAM_DEADLINE_MS: '1000',
    });
  });
  afterAll(() => gateway.close());

  it('keeps working rows in doubt every interval', async () => {
    const { tenantId } = await gateway.newTenantWithKey('app');
    const tpp = transportTo(gateway.sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    const created = await createBankConsent(tpp);
    await tpp.close();
    // Younger than the deadline: the pass at start (over by now or not) leaves it to a later pass.
    const id = randomUUID();
    await gateway.dataSource.query(
      `INSERT INTO consents (id, tenant_id, kind, brand_id, upstream_consent_id, requested_access, status, redirect_uri, created_at)
       VALUES ($1, $2, 'ais', 'danube-bank', $3, '{}', 'unknown', 'https://app.example/r', now())`,
      [id, tenantId, created.body?.consentId],
    );
    const status = async () =>
      (await gateway.dataSource.query(`SELECT status FROM consents WHERE id = $1`, [id]))[0]
        .status as string;
    for (let waited = 0; (await status()) === 'unknown'; waited += 100) {
      if (waited > 10_000) throw new Error('still in doubt after 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await status()).toBe('received');
  });
});
