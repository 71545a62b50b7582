import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795216535010 implements MigrationInterface {
  name = 'Initial1795216535010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "api_key_usage" ("key_id" uuid NOT NULL, "window_start" TIMESTAMP WITH TIME ZONE NOT NULL, "count" integer NOT NULL, CONSTRAINT "PK_da7766e0a8f6469a026f0d62a25" PRIMARY KEY ("key_id", "window_start"))',
    );
    await queryRunner.query(
      'CREATE TABLE "tenants" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "slug" character varying(63) NOT NULL, "name" character varying(200) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_2310ecc5cb8be427097154b18fc" UNIQUE ("slug"), CONSTRAINT "PK_53be67a04681c66b87ee27c9321" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "api_keys" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "prefix" character varying(8) NOT NULL, "secret_hash" character varying(64) NOT NULL, "role" character varying(16) NOT NULL, "label" character varying(100) NOT NULL DEFAULT \'\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "UQ_6f6105c8efe05b310d046cbdb3d" UNIQUE ("prefix"), CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_3ac18429c8d27858d79432e0dd" ON "api_keys"  ("tenant_id") ',
    );
    await queryRunner.query(
      'ALTER TABLE "api_keys" ADD CONSTRAINT "FK_3ac18429c8d27858d79432e0dda" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "api_keys" DROP CONSTRAINT "FK_3ac18429c8d27858d79432e0dda"',
    );
    await queryRunner.query('DROP INDEX "public"."IDX_3ac18429c8d27858d79432e0dd"');
    await queryRunner.query('DROP TABLE "api_keys"');
    await queryRunner.query('DROP TABLE "tenants"');
    await queryRunner.query('DROP TABLE "api_key_usage"');
  }
}
