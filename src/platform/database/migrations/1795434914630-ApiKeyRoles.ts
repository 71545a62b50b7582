import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ApiKeyRoles1795434914630 implements MigrationInterface {
  name = 'ApiKeyRoles1795434914630';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      "ALTER TABLE \"api_keys\" ADD CONSTRAINT \"CHK_api_keys_role\" CHECK (\"role\" IN ('app', 'auditor', 'admin', 'operator'))",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "api_keys" DROP CONSTRAINT "CHK_api_keys_role"');
  }
}
