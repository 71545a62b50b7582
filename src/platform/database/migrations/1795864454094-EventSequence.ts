import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook events numbered per resource (`sequence`, from `webhook_event_sequences`) and named by the
 * provider's id too (`provider_id`): an app orders a resource's events and finds them by pmt_….
 */
export class EventSequence1795864454094 implements MigrationInterface {
  name = 'EventSequence1795864454094';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "webhook_event_sequences" ("resource_id" uuid NOT NULL, "last" integer NOT NULL, CONSTRAINT "PK_4078c1088d9864d48b9f5feccd0" PRIMARY KEY ("resource_id"))',
    );
    await queryRunner.query('ALTER TABLE "webhook_events" ADD "provider_id" character varying(64)');
    await queryRunner.query('ALTER TABLE "webhook_events" ADD "sequence" integer');
    await queryRunner.query(
      'CREATE INDEX "IDX_ef40fbac67c2738365ef9b7441" ON "webhook_events"  ("tenant_id", "provider_id") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_ef40fbac67c2738365ef9b7441"');
    await queryRunner.query('ALTER TABLE "webhook_events" DROP COLUMN "sequence"');
    await queryRunner.query('ALTER TABLE "webhook_events" DROP COLUMN "provider_id"');
    await queryRunner.query('DROP TABLE "webhook_event_sequences"');
  }
}
