import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { MIGRATIONS } from '#src/platform/database/migrations/index.js';
import {
  checkMigrations,
  refusalsOf,
  statementsOf,
  type CompatPolicy,
} from '../../tools/migration-compat/rules.js';

const rulesBroken = (statement: string) =>
  refusalsOf('M1800000000000', [statement]).map((r) => r.rule);

/** A migration whose `up` runs these statements. */
function migration(name: string, statements: string[]): MigrationInterface {
  return {
    name,
    async up(runner: QueryRunner) {
      for (const statement of statements) await runner.query(statement);
    },
    async down() {},
  };
}

describe('the expand-then-contract rules', () => {
  it.each([
    ['DROP TABLE "card_resources"', 'drop-table'],
    ['DROP VIEW IF EXISTS "v"', 'drop-table'],
    ['DROP TYPE "public"."consents_status_enum"', 'drop-table'],
    ['ALTER TABLE "access_log" DROP COLUMN "writer"', 'drop-column'],
    ['ALTER TABLE access_log DROP writer', 'drop-column'],
    ['ALTER TABLE "card_resources" RENAME TO "provider_resources"', 'rename'],
    ['ALTER TABLE "webhook_endpoints" RENAME COLUMN "secret" TO "secret_sealed"', 'rename'],
    ["ALTER TYPE \"status_enum\" RENAME VALUE 'a' TO 'b'", 'rename'],
    ['ALTER TABLE "t" ALTER COLUMN "c" TYPE character varying(16)', 'alter-type'],
    ['ALTER TABLE "t" ALTER COLUMN "c" SET DATA TYPE bigint', 'alter-type'],
    ['ALTER TABLE "t" ALTER COLUMN "c" SET NOT NULL', 'set-not-null'],
    ['ALTER TABLE "t" ADD "c" uuid NOT NULL', 'add-not-null-without-default'],
    [
      'ALTER TABLE "t" ADD COLUMN "a" integer, ADD COLUMN "b" text NOT NULL',
      'add-not-null-without-default',
    ],
    ['ALTER TABLE "t" ALTER COLUMN "c" DROP DEFAULT', 'drop-default'],
  ])('refuses %s (%s)', (statement, rule) => {
    expect(rulesBroken(statement)).toEqual([rule]);
  });

  it.each([
    'CREATE TABLE "writer_leases" ("writer" uuid NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL)',
    'ALTER TABLE "access_log" ADD "writer" uuid',
    'ALTER TABLE "t" ADD "attempts" integer NOT NULL DEFAULT 0',
    'ALTER TABLE "t" ADD "n" bigint NOT NULL GENERATED ALWAYS AS IDENTITY',
    'ALTER TABLE "t" ADD CONSTRAINT "UQ_x" UNIQUE ("a")',
    'ALTER TABLE "t" DROP CONSTRAINT "FK_x"',
    'ALTER TABLE "t" ALTER COLUMN "c" DROP NOT NULL',
    'ALTER TABLE "t" ALTER COLUMN "c" SET DEFAULT 0',
    'ALTER TABLE "t" RENAME CONSTRAINT "a" TO "b"',
    'ALTER INDEX "IDX_a" RENAME TO "IDX_b"',
    'ALTER TYPE "status_enum" ADD VALUE \'unknown\'',
    'CREATE INDEX "IDX_a" ON "t" ("a")',
    'DROP INDEX "IDX_a"',
    // A function body may say anything: it is no schema change of its own.
    `CREATE OR REPLACE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN ALTER TABLE x DROP COLUMN y; RAISE EXCEPTION 'cannot DROP TABLE'; END $$`,
    'COMMENT ON TABLE "t" IS \'DROP TABLE t\'',
  ])('lets through %s', (statement) => {
    expect(rulesBroken(statement)).toEqual([]);
  });

  it('records the QueryRunner calls that contract the schema', async () => {
    const statements = await statementsOf({
      name: 'Api1800000000000',
      async up(runner: QueryRunner) {
        await runner.query('ALTER TABLE "t" ADD "c" text');
        await runner.dropColumn('t', 'old');
        await runner.createIndex('t', {} as never);
      },
      async down() {},
    });
    expect(statements).toEqual([
      'ALTER TABLE "t" ADD "c" text',
      '-- queryRunner.dropColumn',
      '-- queryRunner.createIndex',
    ]);
    expect(refusalsOf('Api1800000000000', statements).map((r) => r.rule)).toEqual([
      'queryRunner.dropColumn',
    ]);
  });
});

describe('the check over migrations newer than the baseline', () => {
  const history = [
    migration('Old1800000000000', ['ALTER TABLE "t" DROP COLUMN "gone"']),
    migration('Base1800000000001', ['ALTER TABLE "t" ADD "c" text']),
    migration('Expand1800000000002', ['ALTER TABLE "t" ADD "d" text']),
    migration('Contract1800000000003', [
      'ALTER TABLE "t" DROP COLUMN "c"',
      'ALTER TABLE "t" DROP COLUMN "e"',
    ]),
  ];
  const policy = (exceptions: CompatPolicy['exceptions']): CompatPolicy => ({
    baseline: 'Base1800000000001',
    exceptions,
  });

  it('refuses a contraction after the baseline and leaves released history alone', async () => {
    const report = await checkMigrations(history, policy([]));
    expect(report.checked).toEqual(['Expand1800000000002', 'Contract1800000000003']);
    expect(report.refused.map((r) => [r.migration, r.rule, r.statement])).toEqual([
      ['Contract1800000000003', 'drop-column', 'ALTER TABLE "t" DROP COLUMN "c"'],
      ['Contract1800000000003', 'drop-column', 'ALTER TABLE "t" DROP COLUMN "e"'],
    ]);
  });

  it('excuses exactly the statement an exception names, and reports an exception that covers nothing', async () => {
    const named = {
      migration: 'Contract1800000000003',
      rule: 'drop-column',
      statement: '"c"',
      reason: 'unread since the release of Expand1800000000002',
    };
    const stale = {
      migration: 'Old1800000000000',
      rule: 'drop-column',
      statement: '"gone"',
      reason: 'x',
    };
    const report = await checkMigrations(history, policy([named, stale]));
    expect(report.excused.map((e) => e.refusal.statement)).toEqual([
      'ALTER TABLE "t" DROP COLUMN "c"',
    ]);
    expect(report.refused.map((r) => r.statement)).toEqual(['ALTER TABLE "t" DROP COLUMN "e"']);
    expect(report.stale).toEqual([stale]);
  });

  it('refuses a baseline that names no migration', async () => {
    await expect(checkMigrations(history, { baseline: 'Latest', exceptions: [] })).rejects.toThrow(
      /baseline/,
    );
  });

  it("passes the repository's migrations under the committed policy", async () => {
    const committed = JSON.parse(
      readFileSync('src/platform/database/migrations/expand-contract.json', 'utf8'),
    ) as CompatPolicy;
    expect(MIGRATIONS.some((M) => new M().name === committed.baseline)).toBe(true);
    const report = await checkMigrations(
      MIGRATIONS.map((M) => new M()),
      committed,
    );
    expect({ refused: report.refused, stale: report.stale }).toEqual({ refused: [], stale: [] });
  });

  it('finds the contractions the history made before the check existed', async () => {
    const report = await checkMigrations(
      MIGRATIONS.map((M) => new M()),
      { baseline: 'Before0000000000000', exceptions: [] },
    );
    expect(report.refused.map((r) => `${r.migration} ${r.rule}`)).toEqual(
      expect.arrayContaining([
        'SealedWebhookSecrets1795450000000 rename',
        'ProviderResources1795710000000 rename',
      ]),
    );
  });
});
