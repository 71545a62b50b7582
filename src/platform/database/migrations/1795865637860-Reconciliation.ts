import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Reconciliation1795865637860 implements MigrationInterface {
  name = 'Reconciliation1795865637860';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "reconciliation_runs" ("id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "capability" character varying(16) NOT NULL, "window_from" date NOT NULL, "window_to" date NOT NULL, "trigger" character varying(12) NOT NULL, "status" character varying(12) NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE NOT NULL, "counts" jsonb, "requests" integer NOT NULL DEFAULT \'0\', "duration_ms" integer, "error" character varying(300), "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_4edbdb165c9e754997036a4176a" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "UQ_reconciliation_runs_daily" ON "reconciliation_runs"  ("tenant_id", "capability", "window_from") WHERE trigger = \'daily\' AND status IN (\'running\', \'succeeded\')',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "UQ_reconciliation_runs_running" ON "reconciliation_runs"  ("tenant_id", "capability", "window_from", "window_to") WHERE status = \'running\'',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_4ab1865711046c93a5304e00fd" ON "reconciliation_runs"  ("tenant_id", "started_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "reconciliation_drifts" ("id" uuid NOT NULL, "key" character varying(64) NOT NULL, "run_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "capability" character varying(16) NOT NULL, "kind" character varying(16) NOT NULL, "class" character varying(16) NOT NULL, "resource_id" uuid, "token" character varying(64), "portico" jsonb NOT NULL, "provider" jsonb, "detected_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_e4dd36461967415733e9dfa4f0b" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "UQ_reconciliation_drifts_key" ON "reconciliation_drifts"  ("key") ',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_ad549c5786088728a29dedaff8" ON "reconciliation_drifts"  ("run_id") ',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_ddd211ddbec671aa981b4b2884" ON "reconciliation_drifts"  ("tenant_id", "detected_at") ',
    );
    await queryRunner.query(
      'ALTER TABLE "provider_resources" ADD "origin" character varying(12) NOT NULL DEFAULT \'portico\'',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "provider_resources" DROP COLUMN "origin"');
    await queryRunner.query('DROP INDEX "public"."IDX_ddd211ddbec671aa981b4b2884"');
    await queryRunner.query('DROP INDEX "public"."IDX_ad549c5786088728a29dedaff8"');
    await queryRunner.query('DROP INDEX "public"."UQ_reconciliation_drifts_key"');
    await queryRunner.query('DROP TABLE "reconciliation_drifts"');
    await queryRunner.query('DROP INDEX "public"."IDX_4ab1865711046c93a5304e00fd"');
    await queryRunner.query('DROP INDEX "public"."UQ_reconciliation_runs_running"');
    await queryRunner.query('DROP INDEX "public"."UQ_reconciliation_runs_daily"');
    await queryRunner.query('DROP TABLE "reconciliation_runs"');
  }
}
