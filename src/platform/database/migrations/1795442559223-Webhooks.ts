import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1795442559223 implements MigrationInterface {
  name = 'Webhooks1795442559223';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "webhook_endpoints" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "url" character varying(2000) NOT NULL, "event_types" jsonb NOT NULL DEFAULT \'[]\', "description" character varying(200), "secret" character varying(100) NOT NULL, "previous_secret" character varying(100), "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "removed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_054c4cfb95223732f5939d2d546" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_c6f761e1c162c67ae3b863d877" ON "webhook_endpoints"  ("tenant_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "webhook_events" ("id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "type" character varying(64) NOT NULL, "resource_id" uuid, "body" text NOT NULL, "dedupe_key" character varying(200), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_4cba37e6a0acb5e1fc49c34ebfd" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_c64daa91cce26db387bc965e00" ON "webhook_events"  ("dedupe_key") ',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_7cdf4c93893439adbcf72bf73e" ON "webhook_events"  ("tenant_id", "resource_id") ',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_e3741807867143dae6b95e8b2b" ON "webhook_events"  ("tenant_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "webhook_deliveries" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "event_id" uuid NOT NULL, "endpoint_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "status" character varying(12) NOT NULL, "attempts" integer NOT NULL DEFAULT \'0\', "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE, "lease_token" uuid, "delivered_at" TIMESTAMP WITH TIME ZONE, "replay" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_27d1ee90033bdafe0ffe8f1be6" ON "webhook_deliveries"  ("event_id") ',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_284017efc3cbfe592288749a9c" ON "webhook_deliveries"  ("status", "next_attempt_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "webhook_attempts" ("id" BIGSERIAL NOT NULL, "delivery_id" uuid NOT NULL, "event_id" uuid NOT NULL, "endpoint_id" uuid NOT NULL, "attempt" integer NOT NULL, "worker" character varying(100), "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE, "outcome" character varying(16), "response_status" integer, "latency_ms" integer, "error" character varying(500), CONSTRAINT "PK_2de7e7887ad97de459adab62638" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_f6860b071f398869c7ace8f9e7" ON "webhook_attempts"  ("event_id") ',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_5ec32a71f45112dcc2ef75373a" ON "webhook_attempts"  ("delivery_id", "attempt") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_5ec32a71f45112dcc2ef75373a"');
    await queryRunner.query('DROP INDEX "public"."IDX_f6860b071f398869c7ace8f9e7"');
    await queryRunner.query('DROP TABLE "webhook_attempts"');
    await queryRunner.query('DROP INDEX "public"."IDX_284017efc3cbfe592288749a9c"');
    await queryRunner.query('DROP INDEX "public"."IDX_27d1ee90033bdafe0ffe8f1be6"');
    await queryRunner.query('DROP TABLE "webhook_deliveries"');
    await queryRunner.query('DROP INDEX "public"."IDX_e3741807867143dae6b95e8b2b"');
    await queryRunner.query('DROP INDEX "public"."IDX_7cdf4c93893439adbcf72bf73e"');
    await queryRunner.query('DROP INDEX "public"."IDX_c64daa91cce26db387bc965e00"');
    await queryRunner.query('DROP TABLE "webhook_events"');
    await queryRunner.query('DROP INDEX "public"."IDX_c6f761e1c162c67ae3b863d877"');
    await queryRunner.query('DROP TABLE "webhook_endpoints"');
  }
}
