import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  verifyArchiveFile,
  verifyArchives,
  type ArchiveBreak,
} from '#src/audit/trail/audit-archive-format.js';
import { AuditArchiveService, monthKey } from '#src/audit/trail/audit-archive.service.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { monthOf } from '#src/audit/trail/audit-partitions.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

const signingKey = generateKeyPairSync('ed25519')
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

// Closed months of the trail go to one file each, and the files verify without the database: every
// line's row and link hash, the checkpoints' signatures, the months in a row.
describe('the archive of a closed month', () => {
  let database: OwnDatabase;
  let gateway: TestGateway;
  let tenantId: string;
  const dir = mkdtempSync(join(tmpdir(), 'portico-archive-'));
  const now = new Date();
  const months = [-3, -2, -1].map((offset) => monthOf(now, offset));
  beforeAll(async () => {
    database = await ownDatabase('archive');
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      AUDIT_SEAL_GRACE_MS: '0',
      AUDIT_ARCHIVE_DIR: dir,
      AUDIT_SIGNING_KEY: signingKey,
    });
    ({ tenantId } = await gateway.newTenantWithKey('app'));
    const chain = gateway.app.get(AuditChainService);
    // Three past months of calls and status changes, each sealed and signed as it would have been then.
    // The last month longer: its checkpoint's number has a digit more (numbers are compared as numbers).
    for (const [index, month] of months.entries()) {
      await createMonth(gateway, month);
      await writeMonth(
        gateway,
        tenantId,
        new Date(month.start.getTime() + 86_400_000),
        index === 2 ? 95 : 20,
      );
      await chain.seal();
      await chain.checkpoint();
    }
    // And this month's, which is not over.
    await writeMonth(gateway, tenantId, new Date(now.getTime() - 2 * 3_600_000), 5);
    await chain.seal();
  }, 120_000);
  afterAll(async () => {
    await gateway?.close({ unchecked: 'a row of an archived month is edited on purpose' });
    await database?.drop();
  });

  const fileOf = (month: (typeof months)[number]) =>
    join(dir, `portico-audit-${monthKey(month)}.jsonl.gz`);
  const trusted = () => gateway.app.get(AuditChainService).trustedKeys();

  it('archives every closed month once, in a row of files that verify offline', async () => {
    const service = gateway.app.get(AuditArchiveService);
    const { written, waiting } = await service.archiveClosed();
    expect(waiting).toBeUndefined();
    expect(written.map((a) => [a.month, a.written, a.firstSeq, a.lastSeq, a.links])).toEqual([
      [monthKey(months[0]!), true, '1', '25', 25],
      [monthKey(months[1]!), true, '26', '50', 25],
      [monthKey(months[2]!), true, '51', '150', 100],
    ]);
    expect(written[0]!.firstSeq).toBe('1');
    expect(BigInt(written[1]!.firstSeq)).toBe(BigInt(written[0]!.lastSeq) + 1n);
    const report = await verifyArchives(months.map(fileOf), trusted());
    expect(report.firstBreak).toBeNull();
    expect(report.head?.seq).toBe(written[2]!.lastSeq);

    // The file: a header, a line per link with its row, a checkpoint after the last link, a trailer.
    const lines = gunzipSync(readFileSync(fileOf(months[0]!)))
      .toString()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      type: 'header',
      format: 'portico-audit-archive/v1',
      month: monthKey(months[0]!),
      firstSeq: '1',
      lastSeq: '25',
      previousHash: '0'.repeat(64),
    });
    expect(lines[1]).toMatchObject({ type: 'link', seq: '1', tenant: tenantId });
    expect(JSON.parse(lines[1]!.row as string)).toMatchObject({ tenant_id: tenantId });
    expect(lines.at(-2)).toMatchObject({ type: 'checkpoint', seq: '25' });
    expect(lines.at(-1)).toMatchObject({
      type: 'trailer',
      links: 25,
      accessLog: 20,
      statusChanges: 5,
      checkpoints: 1,
    });

    // Again: nothing written; and written anew, byte for byte the same file.
    expect((await service.archiveClosed()).written).toEqual([]);
    expect(await service.archiveMonth(monthKey(months[0]!))).toMatchObject({ written: false });
    const before = readFileSync(fileOf(months[1]!));
    await gateway.dataSource.query('DELETE FROM audit_archives WHERE month = $1', [
      monthKey(months[1]!),
    ]);
    renameSync(fileOf(months[1]!), `${fileOf(months[1]!)}.old`);
    expect(await service.archiveMonth(monthKey(months[1]!))).toMatchObject({ written: true });
    expect(readFileSync(fileOf(months[1]!)).equals(before)).toBe(true);

    // The current month is not over.
    expect(await service.archiveMonth(monthKey(monthOf(now)))).toMatchObject({
      reason: 'the month is not over',
    });
  });

  /** A copy of the first month's archive with its uncompressed lines changed. */
  const tampered = (name: string, change: (lines: string[]) => string[]) => {
    const lines = gunzipSync(readFileSync(fileOf(months[0]!)))
      .toString()
      .trimEnd()
      .split('\n');
    const path = join(dir, name);
    writeFileSync(path, gzipSync(`${change(lines).join('\n')}\n`));
    return path;
  };
  const breakOf = async (path: string): Promise<ArchiveBreak | null> =>
    (await verifyArchiveFile(path, trusted())).firstBreak;

  it('names an edited, a missing or a reordered line, a bad signature and a cut-short file by line', async () => {
    // Line n + 1 holds link n; an access-log row's JSON is a string inside the line.
    let target = 0;
    const edited = tampered('edited.jsonl.gz', (lines) => {
      target = lines.findIndex((line, i) => i >= 5 && line.includes('\\"latency_ms\\": 7'));
      return lines.map((line, i) =>
        i === target ? line.replace('\\"latency_ms\\": 7', '\\"latency_ms\\": 8') : line,
      );
    });
    expect(await breakOf(edited)).toMatchObject({
      problem: 'row-edited',
      line: target + 1,
      seq: String(target),
    });

    // A row replaced along with its hash: the link's hash no longer follows, or the row is not its link's.
    const replaced = tampered('replaced.jsonl.gz', (lines) =>
      lines.map((line, i) => {
        if (i !== 7) return line;
        const link = JSON.parse(line) as Record<string, string>;
        return JSON.stringify({
          ...link,
          row: 'not a row',
          rowHash: createHash('sha256').update('not a row').digest('hex'),
        });
      }),
    );
    expect(await breakOf(replaced)).toMatchObject({ problem: 'link-altered', line: 8, seq: '7' });

    const deleted = tampered('deleted.jsonl.gz', (lines) => lines.filter((_, i) => i !== 9));
    expect(await breakOf(deleted)).toMatchObject({ problem: 'gap', line: 10, seq: '10' });

    const reordered = tampered('reordered.jsonl.gz', (lines) => {
      const copy = [...lines];
      [copy[3], copy[4]] = [copy[4]!, copy[3]!];
      return copy;
    });
    expect(await breakOf(reordered)).toMatchObject({ problem: 'reordered', line: 4, seq: '4' });

    const forged = tampered('forged.jsonl.gz', (lines) =>
      lines.map((line) =>
        line.includes('"type":"checkpoint"')
          ? line.replace(
              /"signature":"[^"]+"/,
              `"signature":"${Buffer.alloc(64).toString('base64')}"`,
            )
          : line,
      ),
    );
    expect(await breakOf(forged)).toMatchObject({ problem: 'checkpoint-signature', seq: '25' });

    const recomputed = tampered('trailer.jsonl.gz', (lines) =>
      lines.map((line, i) =>
        i === lines.length - 1 ? line.replace('"links":25', '"links":24') : line,
      ),
    );
    expect(await breakOf(recomputed)).toMatchObject({ problem: 'trailer-mismatch', line: 28 });

    const whole = readFileSync(fileOf(months[0]!));
    const half = join(dir, 'half.jsonl.gz');
    writeFileSync(half, whole.subarray(0, Math.floor(whole.length / 2)));
    expect((await breakOf(half))?.problem).toMatch(/^(unreadable|truncated)$/);

    // A month left out of a row of archives.
    expect(
      (await verifyArchives([fileOf(months[0]!), fileOf(months[2]!)], trusted())).firstBreak,
    ).toMatchObject({ problem: 'missing-month', month: monthKey(months[1]!) });
  });

  it('never takes a temporary file for an archive, and leaves none when writing fails', async () => {
    const service = gateway.app.get(AuditArchiveService);
    const month = monthKey(months[2]!);
    await gateway.dataSource.query('DELETE FROM audit_archives WHERE month = $1', [month]);
    renameSync(fileOf(months[2]!), `${fileOf(months[2]!)}.old`);
    // A writer killed half way left its temporary file: not an archive, and gone with the next write.
    const temporary = join(dir, `.portico-audit-${month}.jsonl.gz.999-dead.tmp`);
    writeFileSync(temporary, readFileSync(`${fileOf(months[2]!)}.old`).subarray(0, 200));
    expect((await service.archiveClosed()).written.map((a) => a.month)).toEqual([month]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // A row of the month edited: the month is not archived (no file, no record), and says why.
    await gateway.dataSource.query('DELETE FROM audit_archives WHERE month = $1', [month]);
    renameSync(fileOf(months[2]!), `${fileOf(months[2]!)}.old2`);
    await gateway.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL session_replication_role = replica`);
      await manager.query(
        `UPDATE access_log SET latency_ms = 9 WHERE id = (SELECT min(id) FROM access_log WHERE created_at >= $1 AND created_at < $2)`,
        [months[2]!.start, months[2]!.end],
      );
    });
    await expect(service.archiveMonth(month)).rejects.toThrow(
      /its row differs from what was sealed/,
    );
    expect(readdirSync(dir).filter((name) => name.includes(month))).toEqual([
      `portico-audit-${month}.jsonl.gz.old`,
      `portico-audit-${month}.jsonl.gz.old2`,
    ]);
    expect(
      await gateway.dataSource.query('SELECT 1 FROM audit_archives WHERE month = $1', [month]),
    ).toEqual([]);
  });
});

/** The month's partitions, as the migration made them for months that held rows. */
async function createMonth(gateway: TestGateway, month: ReturnType<typeof monthOf>): Promise<void> {
  for (const table of ['access_log', 'audit_chain'])
    await gateway.dataSource.query(
      `CREATE TABLE IF NOT EXISTS "${table}_${month.name}" PARTITION OF "${table}"
         FOR VALUES FROM ('${month.start.toISOString()}') TO ('${month.end.toISOString()}')`,
    );
}

/** `calls` access-log rows and five status changes, a minute apart from a day into the month. */
async function writeMonth(
  gateway: TestGateway,
  tenantId: string,
  base: Date,
  calls: number,
): Promise<void> {
  await gateway.dataSource.query(
    `INSERT INTO access_log (tenant_id, consent_id, operation, psu_present, outcome, upstream_status, latency_ms, completed_at, created_at)
     SELECT $1, gen_random_uuid(), 'getAccountBalances', true, 'ok', 200, 7, $2::timestamptz + n * interval '1 minute', $2::timestamptz + n * interval '1 minute'
       FROM generate_series(1, $3::int) AS n`,
    [tenantId, base, calls],
  );
  await gateway.dataSource.query(
    `INSERT INTO status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, changed_at)
     SELECT 'consent', gen_random_uuid(), $1, 'received', 'valid', 'sca-callback', $2::timestamptz + n * interval '90 seconds'
       FROM generate_series(1, 5) AS n`,
    [tenantId, base],
  );
}
