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
import { monthOf } from '#src/audit/trail/audit-partitions.js';

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
    const [{ removed }] = (await before.transaction(async (manager) => {
      await manager.query(`SET LOCAL portico.retention = 'on'`);
      await manager.query(
        `DELETE FROM audit_chain c USING access_log a WHERE a.id = c.entry_id AND a.created_at < $1`,
        [oldest.end],
      );
      return manager.query(
        `WITH gone AS (DELETE FROM access_log WHERE created_at < $1 RETURNING 1) SELECT count(*)::int AS removed FROM gone`,
        [oldest.end],
      );
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
      const [{ count }] = (await after.query(
        `SELECT count(*)::int AS count FROM access_log WHERE created_at >= $1 AND created_at < $2`,
        [month.start, month.end],
      )) as { count: number }[];
      started = performance.now();
      for (const table of ['access_log', 'audit_chain']) {
        await after.query(`ALTER TABLE ${table} DETACH PARTITION ${table}_${month.name}`);
        await after.query(`DROP TABLE ${table}_${month.name}`);
      }
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
