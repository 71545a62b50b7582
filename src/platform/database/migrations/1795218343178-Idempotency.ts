import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Idempotency1795218343178 implements MigrationInterface {
  name = 'Idempotency1795218343178';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "idempotency_records" ("tenant_id" uuid NOT NULL, "key" character varying(255) NOT NULL, "route" character varying(300) NOT NULL, "fingerprint" character(64) NOT NULL, "state" character varying(16) NOT NULL, "response_status" integer, "response_body" jsonb, "response_headers" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_0ec449544175b50fe734d3bfbf6" PRIMARY KEY ("tenant_id", "key"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_b3482fdd761179f433dab212e7" ON "idempotency_records"  ("expires_at") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_b3482fdd761179f433dab212e7"');
    await queryRunner.query('DROP TABLE "idempotency_records"');
  }
}
