import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Keys and indexes as the entity names them (TypeORM derives their names from the table's). */
const RENAMES: [from: string, to: string][] = [
  ['IDX_c6844fd1cc9b475890adaaba1a', 'IDX_c392e585601de493e201762198'],
  ['IDX_c63baf839e931d87e6b1941fcd', 'IDX_3568cd7f5fd3fbc02b589b3787'],
  ['IDX_e1cda21a79856f79ac6cc421a5', 'IDX_fcdcab21baad84f3b4cf122d2a'],
  ['IDX_d7c17fc0e92f4bd35c942111a9', 'IDX_1dfb126928b720896ac5f4cad9'],
];
const PRIMARY_KEY = ['PK_8c6e5479dab95078ddee723d7f3', 'PK_19db699562d9b4a25707ca1c86c'] as const;

/**
 * card_resources becomes provider_resources: the provider-resource ledger's table holds card,
 * marketplace, wallet and POS rows. A rename: every row, its history and its access-log rows stay.
 */
export class ProviderResources1795710000000 implements MigrationInterface {
  name = 'ProviderResources1795710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await this.rename(queryRunner, 'card_resources', 'provider_resources', 0, 1);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await this.rename(queryRunner, 'provider_resources', 'card_resources', 1, 0);
  }

  private async rename(
    queryRunner: QueryRunner,
    from: string,
    to: string,
    old: 0 | 1,
    fresh: 0 | 1,
  ): Promise<void> {
    await queryRunner.query(`ALTER TABLE "${from}" RENAME TO "${to}"`);
    await queryRunner.query(
      `ALTER TABLE "${to}" RENAME CONSTRAINT "${PRIMARY_KEY[old]}" TO "${PRIMARY_KEY[fresh]}"`,
    );
    for (const names of RENAMES)
      await queryRunner.query(`ALTER INDEX "${names[old]}" RENAME TO "${names[fresh]}"`);
  }
}
