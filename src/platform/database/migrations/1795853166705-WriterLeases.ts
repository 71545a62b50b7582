import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The function as AccessLogDeadline1795697933516 left it, with the columns a completion may not change. */
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
  'card_resource_id',
  'deadline_at',
];

/**
 * A lease per process writing the trail (`writer_leases`), and the writer of each access-log row written
 * ahead (`writer`, null for existing rows): the sealer leaves a `sent` row of a live writer unsealed. A
 * completion does not change the writer.
 */
export class WriterLeases1795853166705 implements MigrationInterface {
  name = 'WriterLeases1795853166705';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "writer_leases" ("writer" uuid NOT NULL, "held_since" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_3fd8c0e5ad15bd26e2250dbed6d" PRIMARY KEY ("writer"))',
    );
    await queryRunner.query('ALTER TABLE "access_log" ADD "writer" uuid');
    await queryRunner.query(completeOnce([...BEFORE, 'writer']));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(completeOnce(BEFORE));
    await queryRunner.query('ALTER TABLE "access_log" DROP COLUMN "writer"');
    await queryRunner.query('DROP TABLE "writer_leases"');
  }
}
