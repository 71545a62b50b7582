import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyResource1795422672120 implements MigrationInterface {
  name = 'IdempotencyResource1795422672120';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "idempotency_records" ADD "resource" character varying(200)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "idempotency_records" DROP COLUMN "resource"');
  }
}
