import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { AuditArchiveService, monthKey } from '#src/audit/trail/audit-archive.service.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { AuditPartitionsService, monthOf } from '#src/audit/trail/audit-partitions.js';
import { AuditRetentionService } from '#src/audit/trail/audit-retention.service.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { domesticPayment } from '../support/fixtures.js';
import { porticoClient } from '../support/inject-fetch.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { runProcess } from '../support/processes.js';
import { sampleValue } from '../support/prometheus.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

const DAY_MS = 86_400_000;
const signingKey = generateKeyPairSync('ed25519')
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

// Past the retention period a month's partitions go whole, and only once archived; the archives then
// carry the chain up to the live one's retention cut, offline or joined to it.
describe('retention of the trail by month', () => {
  let database: OwnDatabase;
  let gateway: TestGateway;
  let key: string;
  const dir = mkdtempSync(join(tmpdir(), 'portico-retention-'));
  const now = new Date();
  const months = [-5, -4, -3, -2, -1].map((offset) => monthOf(now, offset));
  // Months -5 to -3 are past the period; -2 and -1 are not.
  const retentionDays = Math.floor((now.getTime() - months[2]!.end.getTime()) / DAY_MS);
  const fileOf = (month: (typeof months)[number]) =>
    join(dir, `portico-audit-${monthKey(month)}.jsonl.gz`);
  beforeAll(async () => {
    database = await ownDatabase('retention');
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      AUDIT_SEAL_GRACE_MS: '0',
      AUDIT_ARCHIVE_DIR: dir,
      AUDIT_SIGNING_KEY: signingKey,
      AUDIT_RETENTION_DAYS: String(retentionDays),
    });
    let tenantId: string;
    ({ tenantId, key } = await gateway.newTenantWithKey('app'));
    const chain = gateway.app.get(AuditChainService);
    for (const month of months) {
      for (const table of ['access_log', 'audit_chain'])
        await gateway.dataSource.query(
          `CREATE TABLE IF NOT EXISTS "${table}_${month.name}" PARTITION OF "${table}"
             FOR VALUES FROM ('${month.start.toISOString()}') TO ('${month.end.toISOString()}')`,
        );
      const base = new Date(month.start.getTime() + DAY_MS);
      await gateway.dataSource.query(
        `INSERT INTO access_log (tenant_id, consent_id, operation, psu_present, outcome, upstream_status, latency_ms, completed_at, created_at)
         SELECT $1, gen_random_uuid(), 'getAccountBalances', true, 'ok', 200, 7, $2::timestamptz + n * interval '1 minute', $2::timestamptz + n * interval '1 minute'
           FROM generate_series(1, 10) AS n`,
        [tenantId, base],
      );
      await gateway.dataSource.query(
        `INSERT INTO status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, changed_at)
         SELECT 'consent', gen_random_uuid(), $1, 'received', 'valid', 'sca-callback', $2::timestamptz + n * interval '90 seconds'
           FROM generate_series(1, 4) AS n`,
        [tenantId, base],
      );
      await chain.seal();
      await chain.checkpoint();
    }
  }, 120_000);
  afterAll(async () => {
    await gateway?.close({ unchecked: 'a retention cut record is removed on purpose' });
    await database?.drop();
  });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    gateway.dataSource.query(text, params) as Promise<T[]>;
  const rowsOf = async (month: (typeof months)[number]) =>
    (
      await sql<{ rows: number }>(
        `SELECT count(*)::int AS rows FROM access_log WHERE created_at >= $1 AND created_at < $2`,
        [month.start, month.end],
      )
    )[0]!.rows;

  it('drops an archived month past the period, keeps one not archived and says why, and the chain verifies from the cut', async () => {
    const archiver = gateway.app.get(AuditArchiveService);
    const retention = gateway.app.get(AuditRetentionService);
    expect(await archiver.archiveMonth(monthKey(months[0]!))).toMatchObject({ links: 14 });

    const { dropped, kept } = await retention.dropExpiredMonths();
    expect(dropped).toMatchObject([{ month: monthKey(months[0]!), seq: '14', rowsRemoved: 14 }]);
    expect(kept).toEqual([
      { month: monthKey(months[1]!), reason: 'not archived (npm run cli -- audit:archive)' },
      { month: monthKey(months[2]!), reason: `an older month (${monthKey(months[1]!)}) is kept` },
    ]);
    expect(await rowsOf(months[0]!)).toBe(0);
    expect(await rowsOf(months[1]!)).toBe(10);
    const partitions = await gateway.app.get(AuditPartitionsService).partitionsOf('access_log');
    expect(partitions).not.toContain(`access_log_${months[0]!.name}`);
    expect(partitions).toContain(`access_log_${months[1]!.name}`);
    const scraped = await gateway.app.get(Metrics).registry.metrics();
    expect(sampleValue(scraped, 'portico_audit_retention_kept_months')).toBe(2);
    expect(
      sampleValue(scraped, 'portico_audit_default_partition_rows', { table: 'access_log' }),
    ).toBe(0);
    expect(sampleValue(scraped, 'portico_audit_last_archive_timestamp_seconds')).toBeGreaterThan(
      now.getTime() / 1000 - 60,
    );

    const verifier = gateway.app.get(AuditVerifierService);
    expect(await verifier.verify({ from: 'start' })).toMatchObject({
      firstBreak: null,
      ok: true,
      links: 56,
      checkpoints: { latest: { seq: '70' } },
    });

    // Archived, the rest past the period goes; a new call is sealed after the cut and verifies.
    expect((await archiver.archiveClosed()).written.map((a) => a.month)).toEqual(
      months.slice(1).map(monthKey),
    );
    expect((await retention.dropExpiredMonths()).dropped.map((d) => [d.month, d.seq])).toEqual([
      [monthKey(months[1]!), '28'],
      [monthKey(months[2]!), '42'],
    ]);
    expect(await retention.unarchivedExpiredMonths()).toBe(0);
    expect(
      (await porticoClient(gateway, key).POST('/v1/payments', { body: domesticPayment() })).response
        .status,
    ).toBe(201);
    await gateway.app.get(AuditChainService).seal();
    const live = await verifier.verify({ from: 'start' });
    expect(live).toMatchObject({ ok: true, from: null });
    expect(Number(live.head?.seq)).toBeGreaterThan(70);

    // Whoever removes the cut record leaves a chain that starts in the middle.
    const [record] = await sql<{ row: string }>(
      `SELECT to_jsonb(r)::text AS row FROM audit_retention_cuts r ORDER BY seq DESC LIMIT 1`,
    );
    await gateway.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL portico.retention = 'on'`);
      await manager.query(`DELETE FROM audit_retention_cuts`);
    });
    expect((await verifier.verify({ from: 'start' })).firstBreak).toMatchObject({
      problem: 'gap',
      seq: '43',
    });
    await sql(
      `INSERT INTO audit_retention_cuts SELECT * FROM jsonb_populate_record(NULL::audit_retention_cuts, $1::jsonb)`,
      [record!.row],
    );
    expect((await verifier.verify({ from: 'start' })).ok).toBe(true);
  });

  it('verifies the archives joined to the live chain across the cut, and names a month missing there', async () => {
    const archiver = gateway.app.get(AuditArchiveService);
    const joined = await archiver.verifyJoined(months.map(fileOf));
    expect(joined).toMatchObject({
      ok: true,
      joined: 'at the retention cut, link 42',
      live: { ok: true },
    });
    expect(joined.archives.map((a) => a.links)).toEqual([14, 14, 14, 14, 14]);
    // The cut is at link 42, the end of month -3: without its archive the chain has a hole.
    expect((await archiver.verifyJoined(months.slice(0, 2).map(fileOf))).firstBreak).toMatchObject({
      problem: 'missing-month',
      month: monthKey(months[2]!),
      seq: '29',
    });
  });

  it('audit:verify --archive verifies offline without a database, and joined with one; an edit is named by its line', async () => {
    const env = {
      AUDIT_SIGNING_KEY: signingKey,
      AUDIT_ARCHIVE_DIR: dir,
      AUDIT_RETENTION_DAYS: String(retentionDays),
    };
    const files = months.map(fileOf);
    const offline = await runProcess(
      'dist/cli/main.js',
      ['audit:verify', '--archive', '--offline', ...files],
      {
        ...env,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      },
    );
    expect(offline.stdout).toContain('the archives verify (offline)');
    expect(offline.code).toBe(0);

    const live = await runProcess(
      'dist/cli/main.js',
      ['audit:verify', '--archive', '--json', ...files],
      {
        ...env,
        DATABASE_URL: database.url,
      },
    );
    expect(JSON.parse(live.stdout)).toMatchObject({ ok: true, live: { ok: true } });
    expect(live.code).toBe(0);

    const lines = gunzipSync(readFileSync(files[1]!)).toString().trimEnd().split('\n');
    lines[3] = lines[3]!.replace('"tenant":"', '"tenant":"0');
    lines[3] = lines[3]!.replace(/\\"id\\": \d+/, '\\"id\\": 1');
    const edited = join(dir, 'edited.jsonl.gz');
    writeFileSync(edited, gzipSync(`${lines.join('\n')}\n`));
    const broken = await runProcess(
      'dist/cli/main.js',
      ['audit:verify', '--archive', '--offline', files[0]!, edited],
      env,
    );
    expect(broken.stdout).toContain('BROKEN in edited.jsonl.gz line 4 (link 17): row-edited');
    expect(broken.code).toBe(1);
  }, 180_000);
});
