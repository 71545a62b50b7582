import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CardApi1795441852748 implements MigrationInterface {
  name = 'CardApi1795441852748';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "card_credentials" ("tenant_id" uuid NOT NULL, "secret_key_sealed" text NOT NULL, "secret_key_hint" character varying(16) NOT NULL, "public_key_sealed" text, "public_key_hint" character varying(16), "pos_key_sealed" text, "pos_key_hint" character varying(16), "merchant_id" character varying(64), "source" character varying(16) NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_ff212d25f37eade59dad689d231" PRIMARY KEY ("tenant_id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "card_resources" ("id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "kind" character varying(16) NOT NULL, "token" character varying(64), "parent_token" character varying(64), "merchant_ref" character varying(120), "status" character varying(24) NOT NULL, "amount" integer, "data" jsonb, "resolver_lease_until" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_8c6e5479dab95078ddee723d7f3" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_d7c17fc0e92f4bd35c942111a9" ON "card_resources"  ("tenant_id", "merchant_ref") WHERE kind = \'payment\' AND status <> \'failed\'',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_c63baf839e931d87e6b1941fcd" ON "card_resources"  ("tenant_id", "token") WHERE token IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_c6844fd1cc9b475890adaaba1a" ON "card_resources"  ("tenant_id", "kind", "created_at") ',
    );
    await queryRunner.query('ALTER TABLE "access_log" ADD "card_resource_id" uuid');
    // Widened in place: the values (and so the hashes of rows already sealed in the audit chain) stay.
    await queryRunner.query(
      'ALTER TABLE "status_changes" ALTER COLUMN "subject_kind" TYPE character varying(16)',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_5b7c4af068a423235cd06ac83a" ON "access_log"  ("card_resource_id", "id") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_5b7c4af068a423235cd06ac83a"');
    await queryRunner.query(
      'ALTER TABLE "status_changes" ALTER COLUMN "subject_kind" TYPE character varying(8)',
    );
    await queryRunner.query('ALTER TABLE "access_log" DROP COLUMN "card_resource_id"');
    await queryRunner.query('DROP INDEX "public"."IDX_c6844fd1cc9b475890adaaba1a"');
    await queryRunner.query('DROP INDEX "public"."IDX_c63baf839e931d87e6b1941fcd"');
    await queryRunner.query('DROP INDEX "public"."IDX_d7c17fc0e92f4bd35c942111a9"');
    await queryRunner.query('DROP TABLE "card_resources"');
    await queryRunner.query('DROP TABLE "card_credentials"');
  }
}
