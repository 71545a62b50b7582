import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reads of a provider resource by the provider's id across tenants (`ResourceStore.owned`: another
 * tenant's is 404) and by its parent (an IRIS callback, a refund's payment, a void's original) had no
 * index starting with those columns: a scan of every tenant's rows per read. Expand-only: two indexes.
 */
export class ProviderIdLookups1795888419496 implements MigrationInterface {
  name = 'ProviderIdLookups1795888419496';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE INDEX "IDX_552f35db076b337d567ba46afa" ON "provider_resources"  ("kind", "parent_token") WHERE parent_token IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_c6f8cce4c50848a1c3cf7d09f2" ON "provider_resources"  ("token", "kind") WHERE token IS NOT NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_c6f8cce4c50848a1c3cf7d09f2"');
    await queryRunner.query('DROP INDEX "public"."IDX_552f35db076b337d567ba46afa"');
  }
}
