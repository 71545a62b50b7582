import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each verification of the audit chain (`audit_verifications`): the next one starts from the newest
 * checkpoint an ok one verified, and the metrics read the last one. Expand-only: a new table.
 */
export class AuditVerifications1795876372140 implements MigrationInterface {
  name = 'AuditVerifications1795876372140';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "audit_verifications" ("id" BIGSERIAL NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "finished_at" TIMESTAMP WITH TIME ZONE, "trigger" character varying(16) NOT NULL, "full" boolean NOT NULL, "ok" boolean, "from_seq" bigint, "links" bigint NOT NULL DEFAULT \'0\', "head_seq" bigint, "head_hash" character(64), "checkpoint_seq" bigint, "checkpoint_hash" character(64), "problem" character varying(32), CONSTRAINT "PK_b0d662ddbb3679bb08f61a6e4d4" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_3ed069360c154d0d6a22220964" ON "audit_verifications"  ("finished_at") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_3ed069360c154d0d6a22220964"');
    await queryRunner.query('DROP TABLE "audit_verifications"');
  }
}
