import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { AuditVerificationJob } from '#src/audit/trail/audit-verification.job.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { porticoClient } from '../support/inject-fetch.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { sampleValue } from '../support/prometheus.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// A daily verification walks what was sealed since the last checkpoint a verification passed, not the
// whole trail; a full walk stays one flag away.
describe('verification from the last verified checkpoint', () => {
  let database: OwnDatabase;
  let gateway: TestGateway;
  let tenantId: string;
  beforeAll(async () => {
    database = await ownDatabase('verify');
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      AUDIT_SEAL_GRACE_MS: '0',
    });
    ({ tenantId } = await gateway.newTenantWithKey('app'));
  }, 120_000);
  afterAll(async () => {
    await gateway?.close({ unchecked: 'an old row is edited on purpose' });
    await database?.drop();
  });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    gateway.dataSource.query(text, params) as Promise<T[]>;
  /** `count` status changes, a minute old, sealed and signed: the checkpoint's number. */
  const sealedRows = async (count: number) => {
    await sql(
      `INSERT INTO status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, changed_at)
       SELECT 'consent', gen_random_uuid(), $1, 'received', 'valid', 'sca-callback', now() - interval '1 minute'
       FROM generate_series(1, $2::int)`,
      [tenantId, count],
    );
    return gateway.app.get(AuditChainService).checkpoint();
  };
  const verifier = () => gateway.app.get(AuditVerifierService);

  it('walks only the links sealed since the newest checkpoint a verification passed', async () => {
    const first = await sealedRows(30);
    // None verified yet: the whole chain.
    let report = await verifier().verify({ from: 'last-verified' });
    expect(report).toMatchObject({ ok: true, full: true, from: null, links: 30 });
    expect(report.checkpoints.latest?.seq).toBe(first);

    const second = await sealedRows(5);
    report = await verifier().verify({ from: 'last-verified' });
    expect(report).toMatchObject({ ok: true, full: false, links: 5 });
    expect(report.from?.seq).toBe(first);
    expect(report.head?.seq).toBe(second);

    // Nothing new: no link walked, the head is where it started.
    report = await verifier().verify({ from: 'last-verified' });
    expect(report).toMatchObject({ ok: true, links: 0, head: { seq: second } });
  });

  it('finds an edit among the new links, and one among the old only on a full walk', async () => {
    await sealedRows(4);
    const [newest] = await sql<{ id: string; seq: string }>(
      `SELECT entry_id AS id, seq FROM audit_chain ORDER BY seq DESC LIMIT 1`,
    );
    const [oldest] = await sql<{ id: string; seq: string }>(
      `SELECT entry_id AS id, seq FROM audit_chain ORDER BY seq LIMIT 1`,
    );
    const edit = (id: string, cause: string) =>
      gateway.dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL session_replication_role = replica`);
        await manager.query(`UPDATE status_changes SET cause = $2 WHERE id = $1`, [id, cause]);
      });

    await edit(newest.id, 'forged');
    let report = await verifier().verify({ from: 'last-verified' });
    expect(report.firstBreak).toMatchObject({ problem: 'row-edited', seq: String(newest.seq) });
    await edit(newest.id, 'sca-callback');
    expect((await verifier().verify({ from: 'last-verified' })).ok).toBe(true);

    await edit(oldest.id, 'forged');
    report = await verifier().verify({ from: 'last-verified' });
    expect(report).toMatchObject({ ok: true, full: false });
    report = await verifier().verify({ from: 'start' });
    expect(report).toMatchObject({ ok: false, full: true });
    expect(report.firstBreak).toMatchObject({ problem: 'row-edited', seq: String(oldest.seq) });
    // The auditors' endpoint walks from the start on request.
    const auditor = porticoClient(gateway, (await gateway.newTenantWithKey('auditor')).key);
    const answered = await auditor.GET('/v1/audit/verification', {
      params: { query: { full: true } },
    });
    expect(answered.data).toMatchObject({
      ok: false,
      full: true,
      firstBreak: { problem: 'row-edited' },
    });
    await edit(oldest.id, 'sca-callback');
    expect((await auditor.GET('/v1/audit/verification')).data).toMatchObject({
      ok: true,
      full: false,
    });
  });

  it('runs on one claim per interval, records what it verified and exports it', async () => {
    await sealedRows(3);
    const job = gateway.app.get(AuditVerificationJob);
    const report = await job.run(86_400_000);
    expect(report).toMatchObject({ ok: true, full: false });
    // Another replica's turn (or this one's) within the interval finds it done.
    expect(await job.run(86_400_000)).toBeUndefined();
    const [row] = await sql<{ ok: boolean; head_seq: string; checkpoint_seq: string }>(
      `SELECT ok, head_seq, checkpoint_seq FROM audit_verifications
        WHERE trigger = 'scheduled' ORDER BY id DESC LIMIT 1`,
    );
    expect(row).toMatchObject({ ok: true });
    expect(String(row.head_seq)).toBe(report!.head?.seq);
    expect(String(row.checkpoint_seq)).toBe(report!.checkpoints.latest?.seq);

    const scraped = await gateway.app.get(Metrics).registry.metrics();
    expect(sampleValue(scraped, 'portico_audit_last_verification_ok')).toBe(1);
    expect(
      sampleValue(scraped, 'portico_audit_last_verification_timestamp_seconds'),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
  });
});
