import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AuditRetention1795436538899 implements MigrationInterface {
  name = 'AuditRetention1795436538899';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "audit_retention_cuts" ("seq" bigint NOT NULL, "chain_hash" character(64) NOT NULL, "removed_before" TIMESTAMP WITH TIME ZONE NOT NULL, "cut_at" TIMESTAMP WITH TIME ZONE NOT NULL, "rows_removed" integer NOT NULL, CONSTRAINT "PK_07d01c5f2cefd3a6817ff6977d8" PRIMARY KEY ("seq"))',
    );
    await queryRunner.query(
      `CREATE TRIGGER audit_retention_cuts_append_only BEFORE UPDATE OR DELETE ON "audit_retention_cuts" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()`,
    );
    // The retention job (and only a session that says it is one) may delete what it cuts.
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION portico_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'DELETE' AND current_setting('portico.retention', true) = 'on' THEN
           RETURN OLD;
         END IF;
         RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
       END $$`,
    );
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION portico_access_log_complete_once() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'DELETE' THEN
           IF current_setting('portico.retention', true) = 'on' THEN
             RETURN OLD;
           END IF;
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
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION portico_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$`,
    );
    await queryRunner.query(
      'DROP TRIGGER audit_retention_cuts_append_only ON "audit_retention_cuts"',
    );
    await queryRunner.query('DROP TABLE "audit_retention_cuts"');
  }
}
