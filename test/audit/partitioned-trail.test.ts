import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { DataSource } from 'typeorm';
import type { ChainedKind } from '#src/audit/trail/audit-chain.entity.js';
import { AuditChainRepository } from '#src/audit/trail/audit-chain.repository.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { AuditPartitionsService, monthOf } from '#src/audit/trail/audit-partitions.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { GENESIS_HASH, linkHash, rowHashSql } from '#src/audit/trail/chain-hash.js';
import { loadConfig } from '#src/platform/config/app-config.js';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { MIGRATIONS } from '#src/platform/database/migrations/index.js';
import type { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { testEnv } from '../support/test-gateway.js';

const MONTHS = 5;
const ROWS_A_MONTH = 12;

// An existing database's trail, months of it, moves into monthly partitions without losing a row or a link.
describe('the trail partitioned by month', () => {
  let database: OwnDatabase;
  afterAll(async () => {
    await database?.drop();
  });

  it('moves every row and link of several months into their months, and the chain still verifies to the same head', async () => {
    // Empty: migrated below only as far as the release before the partitions.
    database = await ownDatabase('partition', { empty: true });
    const migration = MIGRATIONS.findIndex((m) => m.name.startsWith('PartitionedTrail'));
    const before = new DataSource({
      ...dataSourceOptions(database.url, 1),
      migrations: MIGRATIONS.slice(0, migration),
    });
    await before.initialize();
    await before.runMigrations();
    const tenant = randomUUID();
    const now = new Date();
    // Each month: access-log rows and status changes, from MONTHS months ago to this one.
    for (let m = MONTHS; m >= 0; m--) {
      const start = monthOf(now, -m).start;
      const base =
        m === 0 ? new Date(now.getTime() - 3_600_000) : new Date(start.getTime() + 86_400_000);
      await before.query(
        `INSERT INTO access_log (tenant_id, consent_id, operation, psu_present, outcome, upstream_status, latency_ms, completed_at, created_at)
         SELECT $1, gen_random_uuid(), 'getAccountBalances', true, 'ok', 200, 7, $2::timestamptz + n * interval '1 minute', $2::timestamptz + n * interval '1 minute'
           FROM generate_series(1, $3::int) AS n`,
        [tenant, base, ROWS_A_MONTH],
      );
      await before.query(
        `INSERT INTO status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, changed_at)
         SELECT 'consent', gen_random_uuid(), $1, 'received', 'valid', 'sca-callback', $2::timestamptz + n * interval '90 seconds'
           FROM generate_series(1, 3) AS n`,
        [tenant, base],
      );
    }
    // The chain as the previous release sealed it (no entry_at), in the rows' order.
    let head = GENESIS_HASH;
    let seq = 0;
    await before.transaction(async (manager) => {
      await manager.query(`SET LOCAL TimeZone = 'UTC'`);
      const rows = (await manager.query(
        `SELECT 'access_log' AS kind, t.id, t.tenant_id, ${rowHashSql('t')} AS hash, t.created_at AS at FROM access_log t
         UNION ALL
         SELECT 'status_change', t.id, t.tenant_id, ${rowHashSql('t')}, t.changed_at FROM status_changes t
         ORDER BY at, kind, id`,
      )) as { kind: ChainedKind; id: string; tenant_id: string; hash: string }[];
      for (const row of rows) {
        seq++;
        head = linkHash(head, String(seq), row.kind, String(row.id), row.hash);
        await manager.query(
          `INSERT INTO audit_chain (seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash) VALUES ($1, $2, $3, $4, $5, $6)`,
          [seq, row.kind, row.id, row.tenant_id, row.hash, head],
        );
      }
    });
    const digest = (dataSource: DataSource) =>
      dataSource.query(
        `SELECT (SELECT count(*) FROM access_log)::int AS rows,
                (SELECT md5(string_agg(to_jsonb(a)::text, ',' ORDER BY id)) FROM access_log a) AS log,
                (SELECT md5(string_agg(concat_ws('|', seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash, sealed_at), ',' ORDER BY seq)) FROM audit_chain) AS chain`,
      ) as Promise<{ rows: number; log: string; chain: string }[]>;
    const [was] = await digest(before);
    expect(was.rows).toBe((MONTHS + 1) * ROWS_A_MONTH);
    await before.destroy();

    const after = new DataSource(dataSourceOptions(database.url, 1));
    await after.initialize();
    try {
      await after.runMigrations();
      expect((await digest(after))[0]).toEqual(was);
      // Every row in its month's partition, every link beside it.
      const perPartition = (await after.query(
        `SELECT tableoid::regclass::text AS partition, count(*)::int AS rows FROM access_log GROUP BY 1 ORDER BY 1`,
      )) as { partition: string; rows: number }[];
      expect(perPartition).toEqual(
        Array.from({ length: MONTHS + 1 }, (_, i) => ({
          partition: `access_log_${monthOf(now, i - MONTHS).name}`,
          rows: ROWS_A_MONTH,
        })),
      );
      const [{ misplaced }] = (await after.query(
        `SELECT count(*)::int AS misplaced FROM audit_chain c
           LEFT JOIN access_log a ON c.entry_kind = 'access_log' AND a.id = c.entry_id AND a.created_at = c.entry_at
           LEFT JOIN status_changes s ON c.entry_kind = 'status_change' AND s.id = c.entry_id AND s.changed_at = c.entry_at
          WHERE a.id IS NULL AND s.id IS NULL`,
      )) as { misplaced: number }[];
      expect(misplaced).toBe(0);

      const config = loadConfig(testEnv({ DATABASE_URL: database.url, AUDIT_SEAL_GRACE_MS: '0' }));
      const links = new AuditChainRepository(after);
      const chain = new AuditChainService(links, config, pino({ enabled: false }), {} as Scheduler);
      const verifier = new AuditVerifierService(links, chain, config);
      const report = await verifier.verify({ from: 'start' });
      expect(report).toMatchObject({
        ok: true,
        links: seq,
        head: { seq: String(seq), chainHash: head },
      });

      // The partitions ahead exist; a new row is sealed into this month's partitions and verifies.
      const partitions = new AuditPartitionsService(after, config, pino({ enabled: false }), {
        register: () => undefined,
      } as unknown as Scheduler);
      expect(await partitions.createAhead()).toEqual([]);
      expect(await partitions.partitionsOf('audit_chain')).toContain(
        `audit_chain_${monthOf(now, 3).name}`,
      );
      await after.query(
        `INSERT INTO status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, changed_at)
         VALUES ('consent', gen_random_uuid(), $1, 'valid', 'expired', 'expiry', now() - interval '1 minute')`,
        [tenant],
      );
      expect(await chain.seal()).toBe(1);
      expect((await verifier.verify({ from: 'start' })).ok).toBe(true);

      // An edit in an old month is found at its link.
      const [old] = (await after.query(
        `SELECT c.seq, a.id FROM access_log a JOIN audit_chain c ON c.entry_kind = 'access_log' AND c.entry_id = a.id
          ORDER BY a.created_at LIMIT 1`,
      )) as { seq: string; id: string }[];
      await after.transaction(async (manager) => {
        await manager.query(`SET LOCAL session_replication_role = replica`);
        await manager.query(`UPDATE access_log SET latency_ms = 8 WHERE id = $1`, [old.id]);
      });
      expect((await verifier.verify({ from: 'start' })).firstBreak).toMatchObject({
        problem: 'row-edited',
        seq: String(old.seq),
      });
    } finally {
      await after.destroy();
    }
  }, 120_000);
});
