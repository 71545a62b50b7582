import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ScaApproach1795426269790 implements MigrationInterface {
  name = 'ScaApproach1795426269790';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "consents" ADD "sca_approach" character varying(16)');
    await queryRunner.query('ALTER TABLE "payments" ADD "sca_approach" character varying(16)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "payments" DROP COLUMN "sca_approach"');
    await queryRunner.query('ALTER TABLE "consents" DROP COLUMN "sca_approach"');
  }
}
