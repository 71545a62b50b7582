import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The record of each closed month archived (`audit_archives`). Expand-only: a new table. */
export class AuditArchives1795888027939 implements MigrationInterface {
  name = 'AuditArchives1795888027939';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "audit_archives" ("month" character varying(7) NOT NULL, "file_name" text NOT NULL, "sha256" character(64) NOT NULL, "first_seq" bigint NOT NULL, "last_seq" bigint NOT NULL, "rows" bigint NOT NULL, "bytes" bigint NOT NULL, "written_at" TIMESTAMP WITH TIME ZONE NOT NULL, "verified_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_cf9dc20b180039b638610f465af" PRIMARY KEY ("month"))',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "audit_archives"');
  }
}
