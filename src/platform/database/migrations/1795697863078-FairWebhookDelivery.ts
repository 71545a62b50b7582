import type { MigrationInterface, QueryRunner } from 'typeorm';

export class FairWebhookDelivery1795697863078 implements MigrationInterface {
  name = 'FairWebhookDelivery1795697863078';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_284017efc3cbfe592288749a9c"');
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ADD "failing_since" TIMESTAMP WITH TIME ZONE',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ADD "consecutive_failures" integer NOT NULL DEFAULT \'0\'',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ADD "retry_at" TIMESTAMP WITH TIME ZONE',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ADD "paused_at" TIMESTAMP WITH TIME ZONE',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ADD "last_claimed_at" TIMESTAMP WITH TIME ZONE',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_webhook_deliveries_leased" ON "webhook_deliveries"  ("endpoint_id") WHERE lease_token IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_webhook_deliveries_pending" ON "webhook_deliveries"  ("endpoint_id", "next_attempt_at") WHERE status = \'pending\'',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_webhook_deliveries_pending"');
    await queryRunner.query('DROP INDEX "public"."IDX_webhook_deliveries_leased"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "last_claimed_at"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "paused_at"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "retry_at"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "consecutive_failures"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "failing_since"');
    await queryRunner.query(
      'CREATE INDEX "IDX_284017efc3cbfe592288749a9c" ON "webhook_deliveries" USING btree ("status", "next_attempt_at") ',
    );
  }
}
