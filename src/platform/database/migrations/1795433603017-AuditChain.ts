import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AuditChain1795433603017 implements MigrationInterface {
  name = 'AuditChain1795433603017';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "audit_chain" ("seq" bigint NOT NULL, "entry_kind" character varying(16) NOT NULL, "entry_id" bigint NOT NULL, "tenant_id" uuid NOT NULL, "row_hash" character(64) NOT NULL, "chain_hash" character(64) NOT NULL, "sealed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_d31e87c3f18459d04fe709c30a5" PRIMARY KEY ("seq"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "IDX_ca4f3343ccdce8cabb0542c920" ON "audit_chain"  ("entry_kind", "entry_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "audit_checkpoints" ("seq" bigint NOT NULL, "chain_hash" character(64) NOT NULL, "signed_at" TIMESTAMP WITH TIME ZONE NOT NULL, "key_id" character varying(16) NOT NULL, "signature" text NOT NULL, CONSTRAINT "PK_00d27c519361818fba5bb6602de" PRIMARY KEY ("seq"))',
    );
    await queryRunner.query(
      'CREATE TABLE "audit_seal_floors" ("entry_kind" character varying(16) NOT NULL, "floor" bigint NOT NULL, CONSTRAINT "PK_3a6013abd6075494fc83af22b62" PRIMARY KEY ("entry_kind"))',
    );
    await queryRunner.query(
      `CREATE TRIGGER audit_chain_append_only BEFORE UPDATE OR DELETE ON "audit_chain" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON "audit_checkpoints" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()`,
    );
    // A sealed access-log row is final, even while still `sent`.
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION portico_access_log_complete_once() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'DELETE' THEN
           RAISE EXCEPTION 'access_log is append-only';
         END IF;
         IF OLD.outcome <> 'sent' OR NEW.outcome = 'sent' OR OLD.completed_at IS NOT NULL
            OR NEW.completed_at IS NULL
            OR (NEW.id, NEW.tenant_id, NEW.consent_id, NEW.payment_id, NEW.operation, NEW.account_id,
                NEW.psu_present, NEW.request_id, NEW.created_at)
               IS DISTINCT FROM
               (OLD.id, OLD.tenant_id, OLD.consent_id, OLD.payment_id, OLD.operation, OLD.account_id,
                OLD.psu_present, OLD.request_id, OLD.created_at) THEN
           RAISE EXCEPTION 'access_log is append-only: only a sent row may be completed, once';
         END IF;
         IF EXISTS (SELECT 1 FROM audit_chain WHERE entry_kind = 'access_log' AND entry_id = OLD.id) THEN
           RAISE EXCEPTION 'access_log is append-only: row % is sealed', OLD.id;
         END IF;
         RETURN NEW;
       END $$`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER audit_checkpoints_append_only ON "audit_checkpoints"');
    await queryRunner.query('DROP TRIGGER audit_chain_append_only ON "audit_chain"');
    await queryRunner.query('DROP TABLE "audit_seal_floors"');
    await queryRunner.query('DROP TABLE "audit_checkpoints"');
    await queryRunner.query('DROP INDEX "public"."IDX_ca4f3343ccdce8cabb0542c920"');
    await queryRunner.query('DROP TABLE "audit_chain"');
  }
}
