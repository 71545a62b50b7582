import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ConsentRenewal1795437310415 implements MigrationInterface {
  name = 'ConsentRenewal1795437310415';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "consents" ADD "renews_consent_id" uuid');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "consents" DROP COLUMN "renews_consent_id"');
  }
}
