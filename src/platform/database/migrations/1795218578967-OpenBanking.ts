import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OpenBanking1795218578967 implements MigrationInterface {
  name = 'OpenBanking1795218578967';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "access_log" ("id" BIGSERIAL NOT NULL, "tenant_id" uuid NOT NULL, "consent_id" uuid, "payment_id" uuid, "operation" character varying(64) NOT NULL, "account_id" character varying(128), "psu_present" boolean NOT NULL, "request_id" uuid, "upstream_status" integer, "outcome" character varying(64) NOT NULL, "latency_ms" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_bd09621fb73b42d9e32b85ae41f" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_bb61cc3c9b12b189016f54e31c" ON "access_log"  ("payment_id", "id") ',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_85a4e274e4d1aa6a36de78eea7" ON "access_log"  ("consent_id", "id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "consent_usage" ("consent_id" uuid NOT NULL, "day" date NOT NULL, "count" integer NOT NULL, CONSTRAINT "PK_7f72d3efd5022eb9cbc48064633" PRIMARY KEY ("consent_id", "day"))',
    );
    await queryRunner.query(
      'CREATE TABLE "consents" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "kind" character varying(3) NOT NULL, "brand_id" character varying(128) NOT NULL, "upstream_consent_id" character varying(128), "requested_access" jsonb NOT NULL, "granted_access" jsonb, "accounts" jsonb NOT NULL DEFAULT \'[]\', "recurring_indicator" boolean, "valid_until" date, "frequency_per_day" integer, "status" character varying(24) NOT NULL, "redirect_uri" character varying(2000) NOT NULL, "nok_redirect_uri" character varying(2000), "psu_reference" character varying(200), "sca_redirect" character varying(2000), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_sca_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_9efc68eb6aba7d638fb6ea034dd" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_eece437238ada7661d360cee63" ON "consents"  ("tenant_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "status_changes" ("id" BIGSERIAL NOT NULL, "subject_kind" character varying(8) NOT NULL, "subject_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "from_status" character varying(24), "to_status" character varying(24) NOT NULL, "cause" character varying(64) NOT NULL, "request_id" uuid, "changed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_b09386c7bfe17fbe0b6d24e719e" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_d64d572d338b9a73f9edf2424f" ON "status_changes"  ("subject_kind", "subject_id", "id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "payments" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "brand_id" character varying(128) NOT NULL, "payment_product" character varying(64) NOT NULL, "upstream_payment_id" character varying(128), "details" jsonb NOT NULL, "status" character varying(8) NOT NULL, "redirect_uri" character varying(2000) NOT NULL, "nok_redirect_uri" character varying(2000), "psu_reference" character varying(200), "sca_redirect" character varying(2000), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_sca_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_197ab7af18c93fbb0c9b28b4a59" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_6c039ced2230e9c06f2a872000" ON "payments"  ("tenant_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "sca_sessions" ("state_hash" character varying(64) NOT NULL, "subject_kind" character varying(8) NOT NULL, "subject_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_aaf6bf655f10cbc7ad00578a057" PRIMARY KEY ("state_hash"))',
    );
    // The audit trail is append-only: the database itself refuses to change or remove its rows.
    await queryRunner.query(
      `CREATE FUNCTION portico_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER status_changes_append_only BEFORE UPDATE OR DELETE ON "status_changes" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER access_log_append_only BEFORE UPDATE OR DELETE ON "access_log" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER access_log_append_only ON "access_log"`);
    await queryRunner.query(`DROP TRIGGER status_changes_append_only ON "status_changes"`);
    await queryRunner.query(`DROP FUNCTION portico_refuse_change()`);
    await queryRunner.query('DROP TABLE "sca_sessions"');
    await queryRunner.query('DROP INDEX "public"."IDX_6c039ced2230e9c06f2a872000"');
    await queryRunner.query('DROP TABLE "payments"');
    await queryRunner.query('DROP INDEX "public"."IDX_d64d572d338b9a73f9edf2424f"');
    await queryRunner.query('DROP TABLE "status_changes"');
    await queryRunner.query('DROP INDEX "public"."IDX_eece437238ada7661d360cee63"');
    await queryRunner.query('DROP TABLE "consents"');
    await queryRunner.query('DROP TABLE "consent_usage"');
    await queryRunner.query('DROP INDEX "public"."IDX_85a4e274e4d1aa6a36de78eea7"');
    await queryRunner.query('DROP INDEX "public"."IDX_bb61cc3c9b12b189016f54e31c"');
    await queryRunner.query('DROP TABLE "access_log"');
  }
}
