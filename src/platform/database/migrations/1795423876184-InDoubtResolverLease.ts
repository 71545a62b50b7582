import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InDoubtResolverLease1795423876184 implements MigrationInterface {
  name = 'InDoubtResolverLease1795423876184';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "consents" ADD "resolver_lease_until" TIMESTAMP WITH TIME ZONE',
    );
    await queryRunner.query(
      'ALTER TABLE "payments" ADD "resolver_lease_until" TIMESTAMP WITH TIME ZONE',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "payments" DROP COLUMN "resolver_lease_until"');
    await queryRunner.query('ALTER TABLE "consents" DROP COLUMN "resolver_lease_until"');
  }
}
