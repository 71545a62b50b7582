import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The access log becomes write-ahead: a row is written `sent` before the bank is called and completed
 * once after. The append-only trigger now lets exactly that through: a `sent` row may take its outcome,
 * upstream status, latency and completion time, once; every other change and every delete is refused.
 */
export class WriteAheadAccessLog1795432595458 implements MigrationInterface {
  name = 'WriteAheadAccessLog1795432595458';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "access_log" ADD "completed_at" TIMESTAMP WITH TIME ZONE');
    await queryRunner.query('ALTER TABLE "access_log" ALTER COLUMN "latency_ms" DROP NOT NULL');
    await queryRunner.query('DROP TRIGGER access_log_append_only ON "access_log"');
    // Rows written before this migration were complete when written.
    await queryRunner.query('UPDATE "access_log" SET "completed_at" = "created_at"');
    await queryRunner.query(
      `CREATE FUNCTION portico_access_log_complete_once() RETURNS trigger LANGUAGE plpgsql AS $$
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
         RETURN NEW;
       END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER access_log_append_only BEFORE UPDATE OR DELETE ON "access_log" FOR EACH ROW EXECUTE FUNCTION portico_access_log_complete_once()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER access_log_append_only ON "access_log"');
    await queryRunner.query('DROP FUNCTION portico_access_log_complete_once()');
    await queryRunner.query(`UPDATE "access_log" SET "latency_ms" = 0 WHERE "latency_ms" IS NULL`);
    await queryRunner.query('ALTER TABLE "access_log" ALTER COLUMN "latency_ms" SET NOT NULL');
    await queryRunner.query('ALTER TABLE "access_log" DROP COLUMN "completed_at"');
    await queryRunner.query(
      `CREATE TRIGGER access_log_append_only BEFORE UPDATE OR DELETE ON "access_log" FOR EACH ROW EXECUTE FUNCTION portico_refuse_change()`,
    );
  }
}
