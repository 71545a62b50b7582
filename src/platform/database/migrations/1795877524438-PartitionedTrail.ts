import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The access-log trigger's function, the sealed check finding the link by its row's date (its partition). */
const COMPLETE_ONCE = (
  sealedCheck: string,
) => `CREATE OR REPLACE FUNCTION portico_access_log_complete_once() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'DELETE' THEN
       IF current_setting('portico.retention', true) = 'on' THEN
         RETURN OLD;
       END IF;
       RAISE EXCEPTION 'access_log is append-only';
     END IF;
     IF OLD.outcome <> 'sent' OR NEW.outcome = 'sent' OR OLD.completed_at IS NOT NULL
        OR NEW.completed_at IS NULL
        OR (NEW.id, NEW.tenant_id, NEW.consent_id, NEW.payment_id, NEW.operation, NEW.account_id, NEW.psu_present, NEW.request_id, NEW.created_at, NEW.card_resource_id, NEW.deadline_at, NEW.writer)
           IS DISTINCT FROM
           (OLD.id, OLD.tenant_id, OLD.consent_id, OLD.payment_id, OLD.operation, OLD.account_id, OLD.psu_present, OLD.request_id, OLD.created_at, OLD.card_resource_id, OLD.deadline_at, OLD.writer) THEN
       RAISE EXCEPTION 'access_log is append-only: only a sent row may be completed, once';
     END IF;
     IF EXISTS (SELECT 1 FROM audit_chain WHERE entry_kind = 'access_log' AND entry_id = OLD.id${sealedCheck}) THEN
       RAISE EXCEPTION 'access_log is append-only: row % is sealed', OLD.id;
     END IF;
     RETURN NEW;
   END $$`;

/** Months ahead of the current one the migration creates (the audit-partitions job keeps it so). */
const AHEAD = 3;

/** `YYYY_MM` of a month, and its first instant (UTC). */
const monthsFrom = (from: Date, to: Date) => {
  const months: { name: string; start: string; end: string }[] = [];
  for (
    let at = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1));
    at <= to;
    at = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))
  ) {
    const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
    months.push({
      name: `${at.getUTCFullYear()}_${String(at.getUTCMonth() + 1).padStart(2, '0')}`,
      start: at.toISOString(),
      end: next.toISOString(),
    });
  }
  return months;
};

async function partitions(runner: QueryRunner, table: string, oldest: Date | null): Promise<void> {
  const now = new Date();
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + AHEAD, 1));
  for (const month of monthsFrom(oldest && oldest < now ? oldest : now, to))
    await runner.query(
      `CREATE TABLE "${table}_p${month.name}" PARTITION OF "${table}" FOR VALUES FROM ('${month.start}') TO ('${month.end}')`,
    );
  // Never an insert refused for want of a month: a row outside every month lands here (kept empty).
  await runner.query(`CREATE TABLE "${table}_default" PARTITION OF "${table}" DEFAULT`);
}

/**
 * The access log and the audit chain partitioned by month (PostgreSQL's declarative partitioning, on
 * the embedded engine too): the access log on `created_at`, the chain on a new `entry_at`, the date of
 * the row a link seals, so that a month's rows and links sit side by side and a link finds its row in
 * one partition. A partitioned table's keys include its partition key: the access log's is (id,
 * created_at), the chain's (seq, entry_at). Each table is renamed, a partitioned one made in its place
 * with the months from its oldest row to three ahead and a default, every row copied, the old one
 * dropped; a count per table before and after must agree. Not expand-only (expand-contract.json says why).
 */
export class PartitionedTrail1795877524438 implements MigrationInterface {
  name = 'PartitionedTrail1795877524438';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('LOCK TABLE "access_log", "audit_chain" IN ACCESS EXCLUSIVE MODE');
    const [counted] = (await queryRunner.query(
      `SELECT (SELECT count(*) FROM access_log)::bigint AS rows,
              (SELECT count(*) FROM audit_chain)::bigint AS links,
              least((SELECT min(created_at) FROM access_log), (SELECT min(changed_at) FROM status_changes)) AS oldest`,
    )) as ({ rows: string; links: string; oldest: Date | null } | undefined)[];
    const oldest = counted?.oldest ?? null;

    await queryRunner.query('ALTER TABLE "access_log" RENAME TO "access_log_unpartitioned"');
    await queryRunner.query(
      'ALTER TABLE "access_log_unpartitioned" RENAME CONSTRAINT "PK_bd09621fb73b42d9e32b85ae41f" TO "access_log_unpartitioned_pk"',
    );
    for (const index of [
      'IDX_bb61cc3c9b12b189016f54e31c',
      'IDX_85a4e274e4d1aa6a36de78eea7',
      'IDX_5b7c4af068a423235cd06ac83a',
    ])
      await queryRunner.query(`DROP INDEX "${index}"`);
    await queryRunner.query(
      'CREATE TABLE "access_log" (LIKE "access_log_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("created_at")',
    );
    await queryRunner.query('ALTER SEQUENCE "access_log_id_seq" OWNED BY "access_log"."id"');
    await queryRunner.query(
      'ALTER TABLE "access_log" ADD CONSTRAINT "PK_9bbdc30f7d6fe37061c5ec524e5" PRIMARY KEY ("id", "created_at")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_bb61cc3c9b12b189016f54e31c" ON "access_log" ("payment_id", "id")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_85a4e274e4d1aa6a36de78eea7" ON "access_log" ("consent_id", "id")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_5b7c4af068a423235cd06ac83a" ON "access_log" ("card_resource_id", "id")',
    );
    await partitions(queryRunner, 'access_log', oldest);
    await queryRunner.query('INSERT INTO "access_log" SELECT * FROM "access_log_unpartitioned"');

    await queryRunner.query('ALTER TABLE "audit_chain" RENAME TO "audit_chain_unpartitioned"');
    await queryRunner.query(
      'ALTER TABLE "audit_chain_unpartitioned" RENAME CONSTRAINT "PK_d31e87c3f18459d04fe709c30a5" TO "audit_chain_unpartitioned_pk"',
    );
    await queryRunner.query('DROP INDEX "IDX_ca4f3343ccdce8cabb0542c920"');
    await queryRunner.query(
      `CREATE TABLE "audit_chain" (LIKE "audit_chain_unpartitioned" INCLUDING DEFAULTS,
         "entry_at" TIMESTAMP WITH TIME ZONE NOT NULL) PARTITION BY RANGE ("entry_at")`,
    );
    await queryRunner.query(
      'ALTER TABLE "audit_chain" ADD CONSTRAINT "PK_701d72ab2b7e44095e81b3f855b" PRIMARY KEY ("seq", "entry_at")',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_b3063673216379700f284c3407" ON "audit_chain" ("entry_kind", "entry_id", "entry_at")',
    );
    await partitions(queryRunner, 'audit_chain', oldest);
    // A link whose row is gone (someone deleted it) keeps its sealing time: the verifier names it.
    await queryRunner.query(
      `INSERT INTO "audit_chain" (seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash, sealed_at, entry_at)
       SELECT c.seq, c.entry_kind, c.entry_id, c.tenant_id, c.row_hash, c.chain_hash, c.sealed_at,
              coalesce(a.created_at, s.changed_at, c.sealed_at)
         FROM "audit_chain_unpartitioned" c
         LEFT JOIN "access_log_unpartitioned" a ON c.entry_kind = 'access_log' AND a.id = c.entry_id
         LEFT JOIN "status_changes" s ON c.entry_kind = 'status_change' AND s.id = c.entry_id`,
    );

    const [after] = (await queryRunner.query(
      `SELECT (SELECT count(*) FROM access_log)::bigint AS rows, (SELECT count(*) FROM audit_chain)::bigint AS links`,
    )) as ({ rows: string; links: string } | undefined)[];
    if (
      counted &&
      (String(after?.rows) !== String(counted.rows) ||
        String(after?.links) !== String(counted.links))
    )
      throw new Error(
        `partitioning the trail moved ${after?.rows} of ${counted.rows} access-log rows and ${after?.links} of ${counted.links} links`,
      );
    await queryRunner.query('DROP TABLE "access_log_unpartitioned"');
    await queryRunner.query('DROP TABLE "audit_chain_unpartitioned"');
    await queryRunner.query(
      COMPLETE_ONCE(
        ` AND entry_at >= date_trunc('month', OLD.created_at, 'UTC') AND entry_at < date_trunc('month', OLD.created_at, 'UTC') + interval '1 month'`,
      ),
    );
    await queryRunner.query(
      'CREATE TRIGGER access_log_append_only BEFORE UPDATE OR DELETE ON "access_log" FOR EACH ROW EXECUTE FUNCTION portico_access_log_complete_once()',
    );
    await queryRunner.query(
      'CREATE TRIGGER audit_chain_append_only BEFORE UPDATE OR DELETE ON "audit_chain" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('LOCK TABLE "access_log", "audit_chain" IN ACCESS EXCLUSIVE MODE');
    for (const table of ['access_log', 'audit_chain'])
      await queryRunner.query(`ALTER TABLE "${table}" RENAME TO "${table}_partitioned"`);
    await queryRunner.query(
      'ALTER TABLE "access_log_partitioned" RENAME CONSTRAINT "PK_9bbdc30f7d6fe37061c5ec524e5" TO "access_log_partitioned_pk"',
    );
    await queryRunner.query(
      'ALTER TABLE "audit_chain_partitioned" RENAME CONSTRAINT "PK_701d72ab2b7e44095e81b3f855b" TO "audit_chain_partitioned_pk"',
    );
    for (const index of [
      'IDX_bb61cc3c9b12b189016f54e31c',
      'IDX_85a4e274e4d1aa6a36de78eea7',
      'IDX_5b7c4af068a423235cd06ac83a',
      'IDX_b3063673216379700f284c3407',
    ])
      await queryRunner.query(`DROP INDEX "${index}"`);
    await queryRunner.query(
      'CREATE TABLE "access_log" (LIKE "access_log_partitioned" INCLUDING DEFAULTS)',
    );
    await queryRunner.query('ALTER SEQUENCE "access_log_id_seq" OWNED BY "access_log"."id"');
    await queryRunner.query('INSERT INTO "access_log" SELECT * FROM "access_log_partitioned"');
    await queryRunner.query(
      'ALTER TABLE "access_log" ADD CONSTRAINT "PK_bd09621fb73b42d9e32b85ae41f" PRIMARY KEY ("id")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_bb61cc3c9b12b189016f54e31c" ON "access_log" ("payment_id", "id")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_85a4e274e4d1aa6a36de78eea7" ON "access_log" ("consent_id", "id")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_5b7c4af068a423235cd06ac83a" ON "access_log" ("card_resource_id", "id")',
    );
    await queryRunner.query(
      `CREATE TABLE "audit_chain" AS SELECT seq, entry_kind, entry_id, tenant_id, row_hash, chain_hash, sealed_at FROM "audit_chain_partitioned"`,
    );
    await queryRunner.query('ALTER TABLE "audit_chain" ALTER COLUMN "sealed_at" SET DEFAULT now()');
    for (const column of [
      'seq',
      'entry_kind',
      'entry_id',
      'tenant_id',
      'row_hash',
      'chain_hash',
      'sealed_at',
    ])
      await queryRunner.query(`ALTER TABLE "audit_chain" ALTER COLUMN "${column}" SET NOT NULL`);
    await queryRunner.query(
      'ALTER TABLE "audit_chain" ADD CONSTRAINT "PK_d31e87c3f18459d04fe709c30a5" PRIMARY KEY ("seq")',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_ca4f3343ccdce8cabb0542c920" ON "audit_chain" ("entry_kind", "entry_id")',
    );
    await queryRunner.query('DROP TABLE "access_log_partitioned"');
    await queryRunner.query('DROP TABLE "audit_chain_partitioned"');
    await queryRunner.query(COMPLETE_ONCE(''));
    await queryRunner.query(
      'CREATE TRIGGER access_log_append_only BEFORE UPDATE OR DELETE ON "access_log" FOR EACH ROW EXECUTE FUNCTION portico_access_log_complete_once()',
    );
    await queryRunner.query(
      'CREATE TRIGGER audit_chain_append_only BEFORE UPDATE OR DELETE ON "audit_chain" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()',
    );
  }
}
