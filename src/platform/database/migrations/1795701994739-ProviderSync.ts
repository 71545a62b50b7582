import type { MigrationInterface, QueryRunner } from 'typeorm';

/** When the provider sync reads a pending card resource next (or until when a replica holds it). */
export class ProviderSync1795701994739 implements MigrationInterface {
  name = 'ProviderSync1795701994739';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "card_resources" ADD "next_sync_at" TIMESTAMP WITH TIME ZONE',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_e1cda21a79856f79ac6cc421a5" ON "card_resources"  ("kind", "status", "next_sync_at") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_e1cda21a79856f79ac6cc421a5"');
    await queryRunner.query('ALTER TABLE "card_resources" DROP COLUMN "next_sync_at"');
  }
}
