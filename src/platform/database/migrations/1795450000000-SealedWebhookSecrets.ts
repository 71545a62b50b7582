import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook signing secrets are sealed with SECRETS_KEY from now on. A migration has no key, so the secrets
 * already stored are kept as they are (the worker reads a `whsec_` value as the secret itself) and are
 * sealed at their next rotation.
 */
export class SealedWebhookSecrets1795450000000 implements MigrationInterface {
  name = 'SealedWebhookSecrets1795450000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" RENAME COLUMN "secret" TO "secret_sealed"',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" RENAME COLUMN "previous_secret" TO "previous_secret_sealed"',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ALTER COLUMN "secret_sealed" TYPE character varying(200)',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ALTER COLUMN "previous_secret_sealed" TYPE character varying(200)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ALTER COLUMN "previous_secret_sealed" TYPE character varying(100)',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ALTER COLUMN "secret_sealed" TYPE character varying(100)',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" RENAME COLUMN "previous_secret_sealed" TO "previous_secret"',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" RENAME COLUMN "secret_sealed" TO "secret"',
    );
  }
}
