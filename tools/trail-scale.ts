// `npm run trail-scale -- [--rows=N] [--months=M]`: the audit trail at scale on PostgreSQL, before and
// after the monthly partitions (migration PartitionedTrail). Seeds N access-log rows (default 200,000)
// over M months (default 12), sealed into a chain, on the schema before the migration; then measures the
// write path (a row written ahead and completed, one after another), the verifier's walk (links per
// second: the statement it pages with, and the hash of each link), the disk per million rows and the
// removal of a month (row by row, as retention did); migrates (timed); and measures again, the removal of
// a month being a DETACH and DROP of its partitions. Prints figures; asserts nothing. A fresh database
// TRAIL_SCALE_DATABASE (default portico_trail_scale) beside BENCH_DATABASE_URL's.
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { MIGRATIONS } from '#src/platform/database/migrations/index.js';
import { GENESIS_HASH, linkHash, rowHashSql } from '#src/audit/trail/chain-hash.js';
import { AuditPartitionsService, monthOf } from '#src/audit/trail/audit-partitions.js';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { AuditArchiveRepository } from '#src/audit/trail/audit-archive.repository.js';
import { AuditArchiveService, monthKey } from '#src/audit/trail/audit-archive.service.js';
import { AuditChainRepository } from '#src/audit/trail/audit-chain.repository.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { AuditRetentionService } from '#src/audit/trail/audit-retention.service.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { checkpointStatement } from '#src/audit/trail/chain-hash.js';
import { loadConfig } from '#src/platform/config/app-config.js';
import type { Scheduler } from '#src/platform/scheduler/scheduler.js';

const option = (name: string, fallback: number) =>
  Number(
    process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback,
  );
const ROWS = option('rows', 200_000);
const MONTHS = option('months', 12);
const WRITES = option('writes', 2_000);
const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = process.env.TRAIL_SCALE_DATABASE ?? 'portico_trail_scale';
const TENANT = '00000000-0000-4000-8000-000000000001';

const out = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (started: number) => (performance.now() - started) / 1000;
const perSecond = (count: number, started: number) => Math.round(count / seconds(started));

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

function databaseUrl(): string {
  const url = new URL(SERVER);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/** N rows over M months ending an hour ago, and their links, as the previous release sealed them. */
async function seed(db: DataSource): Promise<void> {
  const end = Date.now() - 3_600_000;
  const start = monthOf(new Date(), -(MONTHS - 1)).start.getTime();
  const step = (end - start) / ROWS;
  const started = performance.now();
  await db.query(
    `INSERT INTO access_log (tenant_id, consent_id, operation, psu_present, outcome, upstream_status, latency_ms, completed_at, created_at)
     SELECT $1, gen_random_uuid(), 'getAccountBalances', true, 'ok', 200, 7, t, t
       FROM (SELECT to_timestamp(($2::float8 + n * $3::float8) / 1000) AS t FROM generate_series(1, $4::int) AS n) s`,
    [TENANT, start, step, ROWS],
  );
  let previous = GENESIS_HASH;
  let seq = 0;
  const BATCH = 20_000;
  for (let after = 0; ;) {
    const rows = await db.transaction(async (manager) => {
      await manager.query(`SET LOCAL TimeZone = 'UTC'`);
      return (await manager.query(
        `SELECT t.id, ${rowHashSql('t')} AS hash FROM access_log t WHERE t.id > $1 ORDER BY t.id LIMIT ${BATCH}`,
        [after],
      )) as { id: string; hash: string }[];
    });
    if (rows.length === 0) break;
    const links = rows.map((row) => {
      seq++;
      previous = linkHash(previous, String(seq), 'access_log', String(row.id), row.hash);
      return { seq, id: row.id, hash: row.hash, chain: previous };
    });
    await db.query(
      `INSERT INTO audit_chain (seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash)
       SELECT s, 'access_log', i, $5, h, c FROM unnest($1::bigint[], $2::bigint[], $3::char(64)[], $4::char(64)[]) AS u(s, i, h, c)`,
      [
        links.map((l) => l.seq),
        links.map((l) => l.id),
        links.map((l) => l.hash),
        links.map((l) => l.chain),
        TENANT,
      ],
    );
    after = Number(rows.at(-1)!.id);
  }
  await db.query('ANALYZE access_log, audit_chain');
  out(`seeded ${ROWS} rows and links over ${MONTHS} months in ${seconds(started).toFixed(1)} s`);
}

/**
 * One row written ahead and completed, one after another: the write path's two statements, named
 * (prepared, their plans kept) as the gateway's hot path sends them (PlainSql).
 */
async function writes(partitioned: boolean): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  const sealedCheck = partitioned
    ? `AND c.entry_at >= date_trunc('month', a.created_at, 'UTC') AND c.entry_at < date_trunc('month', a.created_at, 'UTC') + interval '1 month'`
    : '';
  const window = partitioned ? `AND a.created_at > now() - interval '1 day'` : '';
  const started = performance.now();
  for (let i = 0; i < WRITES; i++) {
    const {
      rows: [{ id }],
    } = await client.query<{ id: string }>({
      name: 'write-ahead',
      text: `INSERT INTO access_log (tenant_id, consent_id, operation, psu_present, request_id, outcome)
       VALUES ($1, gen_random_uuid(), 'getAccountBalances', true, gen_random_uuid(), 'sent') RETURNING id`,
      values: [TENANT],
    });
    await client.query({
      name: 'complete',
      text: `UPDATE access_log a SET outcome = 'ok', upstream_status = 200, latency_ms = 5, completed_at = now()
        WHERE a.id = $1 AND a.outcome = 'sent' ${window}
          AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = 'access_log' AND c.entry_id = a.id ${sealedCheck} OFFSET 0)`,
      values: [id],
    });
  }
  const rate = perSecond(WRITES, started);
  await client.end();
  return rate;
}

/**
 * The verifier's walk from the first link there is (after a month removed, from its hash, as from a
 * cut): its paging statement, the row hash and each link's hash.
 */
async function walk(db: DataSource, partitioned: boolean): Promise<number> {
  const join = partitioned ? 'AND a.created_at = c.entry_at' : '';
  const started = performance.now();
  let previous: string | undefined;
  let links = 0;
  await db.transaction('REPEATABLE READ', async (manager) => {
    await manager.query(`SET LOCAL TimeZone = 'UTC'`);
    const [{ first }] = (await manager.query('SELECT min(seq) AS first FROM audit_chain')) as {
      first: string;
    }[];
    if (String(first) === '1') previous = GENESIS_HASH;
    for (let from = Number(first); ;) {
      const rows = (await manager.query(
        `SELECT c.seq, c.entry_id, c.row_hash, c.chain_hash, ${rowHashSql('a')} AS current_hash
           FROM audit_chain c LEFT JOIN access_log a ON a.id = c.entry_id ${join}
          WHERE c.seq >= $1 ORDER BY c.seq LIMIT 5000`,
        [from],
      )) as {
        seq: string;
        entry_id: string;
        row_hash: string;
        chain_hash: string;
        current_hash: string;
      }[];
      for (const row of rows) {
        previous = linkHash(
          previous ?? row.chain_hash,
          String(row.seq),
          'access_log',
          String(row.entry_id),
          row.row_hash,
        );
        // The first link after a removed month: its hash is where the walk starts (a cut's).
        if (links === 0 && String(row.seq) !== '1') previous = row.chain_hash;
        if (previous !== row.chain_hash || row.current_hash !== row.row_hash)
          throw new Error(`the seeded chain does not verify at link ${row.seq}`);
        links++;
      }
      if (rows.length < 5000) break;
      from = Number(rows.at(-1)!.seq) + 1;
    }
  });
  return perSecond(links, started);
}

async function disk(db: DataSource): Promise<{ log: number; chain: number }> {
  const size = async (table: string) => {
    const [{ bytes }] = (await db.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes FROM pg_class c
        WHERE c.oid = $1::regclass OR c.oid IN (SELECT relid FROM pg_partition_tree($1::regclass))`,
      [table],
    )) as { bytes: number }[];
    return bytes;
  };
  const [{ rows }] = (await db.query('SELECT count(*)::float8 AS rows FROM access_log')) as {
    rows: number;
  }[];
  const perMillion = (bytes: number) => Math.round(((bytes / rows) * 1e6) / 1048576);
  return {
    log: perMillion(await size('access_log')),
    chain: perMillion(await size('audit_chain')),
  };
}

async function measure(db: DataSource, label: string, partitioned: boolean): Promise<void> {
  const walked = await walk(db, partitioned);
  const written = await writes(partitioned);
  const { log, chain } = await disk(db);
  out(
    `${label}: write path ${written} rows/s (written ahead and completed, sequential); verifier walk ${walked} links/s; disk ${log} MiB access log + ${chain} MiB chain per million rows`,
  );
}

/**
 * A month archived (AuditArchiveService: its links with their rows, read back and verified) and then
 * dropped by retention (the archive's sha256 checked, its partitions detached and dropped, the cut
 * recorded), as the jobs do. The seeded chain has no checkpoints: one is signed on each month's last link.
 */
async function archiveAndDrop(db: DataSource, month: ReturnType<typeof monthOf>): Promise<void> {
  const pem = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const dir = mkdtempSync(join(tmpdir(), 'portico-trail-scale-'));
  const retentionDays = Math.floor((Date.now() - month.end.getTime()) / 86_400_000);
  const config = loadConfig({
    DATABASE_URL: databaseUrl(),
    AUDIT_SIGNING_KEY: pem,
    AUDIT_ARCHIVE_DIR: dir,
    AUDIT_RETENTION_DAYS: String(retentionDays),
  });
  const logger = pino({ enabled: false });
  const scheduler = { register: () => undefined } as unknown as Scheduler;
  const links = new AuditChainRepository(db);
  const archives = new AuditArchiveRepository(db);
  const chain = new AuditChainService(links, config, logger, scheduler);
  const verifier = new AuditVerifierService(links, chain, config);
  const archiver = new AuditArchiveService(
    links,
    archives,
    chain,
    verifier,
    config,
    logger,
    scheduler,
  );
  const partitions = new AuditPartitionsService(db, config, logger, scheduler);
  const retention = new AuditRetentionService(
    links,
    archives,
    archiver,
    chain,
    partitions,
    config,
    logger,
    scheduler,
  );
  const key = chain.signingKey()!;
  const ends = (await db.query(
    `SELECT seq::text AS seq, chain_hash AS hash FROM audit_retention_cuts`,
  )) as { seq: string; hash: string }[];
  for (let m = -(MONTHS - 1); m <= 0; m++) {
    const [last] = (await db.query(
      `SELECT c.seq::text AS seq, c.chain_hash AS hash FROM audit_chain c WHERE c.entry_at < $1 ORDER BY c.seq DESC LIMIT 1`,
      [monthOf(new Date(), m).end],
    )) as { seq: string; hash: string }[];
    if (last) ends.push(last);
  }
  for (const { seq, hash } of ends) {
    const signedAt = new Date();
    await db.query(
      `INSERT INTO audit_checkpoints (seq, chain_hash, signed_at, key_id, signature) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [
        seq,
        hash,
        signedAt,
        key.keyId,
        sign(null, Buffer.from(checkpointStatement(seq, hash, signedAt)), key.privateKey).toString(
          'base64',
        ),
      ],
    );
  }
  // The floor the sealer keeps: every seeded row is sealed.
  await db.query(
    `INSERT INTO audit_seal_floors (entry_kind, floor) SELECT 'access_log', max(id) FROM access_log ON CONFLICT DO NOTHING`,
  );
  try {
    let started = performance.now();
    const archived = await archiver.archiveMonth(monthKey(month));
    if ('reason' in archived)
      throw new Error(`${monthKey(month)} not archived: ${archived.reason}`);
    out(
      `partitioned: a month (${archived.links} rows and links) archived in ${seconds(started).toFixed(2)} s (${perSecond(archived.links, started)} links/s), ${(archived.bytes / 1048576).toFixed(1)} MiB: ${(((archived.bytes / archived.links) * 1e6) / 1048576).toFixed(0)} MiB per million rows`,
    );
    started = performance.now();
    const { dropped, kept } = await retention.dropExpiredMonths();
    if (dropped.length !== 1) throw new Error(`not dropped: ${JSON.stringify(kept)}`);
    out(
      `partitioned: that month dropped by retention (archive checked, partitions detached and dropped, cut recorded) in ${seconds(started).toFixed(2)} s`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${DATABASE}`);
  const index = MIGRATIONS.findIndex((m) => m.name.startsWith('PartitionedTrail'));
  const before = new DataSource({
    ...dataSourceOptions(databaseUrl(), 2),
    migrations: MIGRATIONS.slice(0, index),
  });
  await before.initialize();
  try {
    await before.runMigrations();
    await seed(before);
    await measure(before, 'one table', false);
    // A month removed as retention did: its rows and links, row by row.
    const oldest = monthOf(new Date(), -(MONTHS - 1));
    let started = performance.now();
    const [{ cutHash }] = (await before.query(
      `SELECT c.chain_hash AS "cutHash" FROM audit_chain c JOIN access_log a ON a.id = c.entry_id
        WHERE a.created_at < $1 ORDER BY c.seq DESC LIMIT 1`,
      [oldest.end],
    )) as { cutHash: string }[];
    const [{ removed }] = (await before.transaction(async (manager) => {
      await manager.query(`SET LOCAL portico.retention = 'on'`);
      await manager.query(
        `DELETE FROM audit_chain c USING access_log a WHERE a.id = c.entry_id AND a.created_at < $1`,
        [oldest.end],
      );
      const removed = (await manager.query(
        `WITH gone AS (DELETE FROM access_log WHERE created_at < $1 RETURNING 1) SELECT count(*)::int AS removed FROM gone`,
        [oldest.end],
      )) as { removed: number }[];
      // The cut as retention records it: the chain now starts after the last link removed.
      await manager.query(
        `INSERT INTO audit_retention_cuts (seq, chain_hash, removed_before, cut_at, rows_removed)
         SELECT $1::bigint, $2, $3, now(), $1::bigint`,
        [removed[0]!.removed, cutHash, oldest.end],
      );
      return removed;
    })) as { removed: number }[];
    out(
      `one table: a month (${removed} rows and links) removed row by row in ${seconds(started).toFixed(2)} s`,
    );
    const [{ rows }] = (await before.query('SELECT count(*)::int AS rows FROM access_log')) as {
      rows: number;
    }[];
    await before.destroy();

    const after = new DataSource(dataSourceOptions(databaseUrl(), 2));
    await after.initialize();
    try {
      started = performance.now();
      await after.runMigrations();
      out(
        `migration to monthly partitions: ${rows} rows and links in ${seconds(started).toFixed(1)} s (${perSecond(rows, started)} rows/s)`,
      );
      await after.query('ANALYZE access_log, audit_chain');
      await measure(after, 'partitioned', true);
      const month = monthOf(new Date(), -(MONTHS - 2));
      await archiveAndDrop(after, month);
      // The next month's partitions, detached and dropped alone (no archive read, no cut).
      const next = monthOf(new Date(), -(MONTHS - 3));
      const [{ count }] = (await after.query(
        `SELECT count(*)::int AS count FROM access_log WHERE created_at >= $1 AND created_at < $2`,
        [next.start, next.end],
      )) as { count: number }[];
      started = performance.now();
      await after.transaction(async (manager) => {
        for (const table of ['access_log', 'audit_chain']) {
          await manager.query(`ALTER TABLE ${table} DETACH PARTITION ${table}_${next.name}`);
          await manager.query(`DROP TABLE ${table}_${next.name}`);
        }
      });
      out(
        `partitioned: a month (${count} rows and links) detached and dropped in ${seconds(started).toFixed(2)} s`,
      );
    } finally {
      await after.destroy();
    }
  } finally {
    if (before.isInitialized) await before.destroy();
    await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
