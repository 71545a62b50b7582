import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The function as AuditRetention1795436538899 left it, with the columns a completion may not change. */
const completeOnce = (unchanged: string[]) =>
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
        OR (${unchanged.map((column) => `NEW.${column}`).join(', ')})
           IS DISTINCT FROM
           (${unchanged.map((column) => `OLD.${column}`).join(', ')}) THEN
       RAISE EXCEPTION 'access_log is append-only: only a sent row may be completed, once';
     END IF;
     IF EXISTS (SELECT 1 FROM audit_chain WHERE entry_kind = 'access_log' AND entry_id = OLD.id) THEN
       RAISE EXCEPTION 'access_log is append-only: row % is sealed', OLD.id;
     END IF;
     RETURN NEW;
   END $$`;

const BEFORE = [
  'id',
  'tenant_id',
  'consent_id',
  'payment_id',
  'operation',
  'account_id',
  'psu_present',
  'request_id',
  'created_at',
];

/**
 * Each access-log row written ahead of a call with a deadline of its own carries it (`deadline_at`),
 * so that the sealer waits for that call's outcome; existing rows keep null (the read deadline). A
 * completion changes neither it nor the card resource the row is about.
 */
export class AccessLogDeadline1795697933516 implements MigrationInterface {
  name = 'AccessLogDeadline1795697933516';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "access_log" ADD "deadline_at" TIMESTAMP WITH TIME ZONE');
    await queryRunner.query(completeOnce([...BEFORE, 'card_resource_id', 'deadline_at']));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(completeOnce(BEFORE));
    await queryRunner.query('ALTER TABLE "access_log" DROP COLUMN "deadline_at"');
  }
}
