import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Expand-then-contract: while a release rolls out, the previous release still runs on the same
 * database, so a migration may add (tables, nullable columns, columns with a default, indexes) but not
 * take away or change what the previous release reads and writes. A contraction ships one release
 * after the code stopped using what it removes, named in the exception list with its reason.
 */
export interface Rule {
  name: string;
  /** Whether a statement (normalised: function bodies and quoted strings blanked, one space) breaks it. */
  breaks(statement: string): boolean;
  /** What the previous release would do. */
  why: string;
}

const ALTER_TABLE = /^ALTER TABLE\b/i;

/** Every `ADD [COLUMN] name definition` clause of an ALTER TABLE, constraints left out. */
function addedColumns(statement: string): string[] {
  if (!ALTER_TABLE.test(statement)) return [];
  return statement
    .split(/,(?=\s*ADD\b)|\bADD\b/i)
    .slice(1)
    .map((clause) => clause.replace(/^\s*ADD\b/i, '').trim())
    .filter(
      (clause) => clause && !/^(CONSTRAINT|PRIMARY|UNIQUE|CHECK|FOREIGN|EXCLUDE)\b/i.test(clause),
    );
}

export const RULES: Rule[] = [
  {
    name: 'drop-table',
    breaks: (s) => /\bDROP (TABLE|VIEW|MATERIALIZED VIEW|TYPE|SCHEMA)\b/i.test(s),
    why: 'the previous release still reads it',
  },
  {
    name: 'drop-column',
    breaks: (s) =>
      ALTER_TABLE.test(s) &&
      /\bDROP (COLUMN\b|(?!CONSTRAINT\b|DEFAULT\b|NOT NULL\b|IDENTITY\b|EXPRESSION\b)(IF EXISTS )?["\w])/i.test(
        s,
      ),
    why: 'the previous release still selects and inserts it',
  },
  {
    name: 'rename',
    breaks: (s) =>
      /^ALTER (TABLE|TYPE|VIEW|MATERIALIZED VIEW)\b/i.test(s) &&
      /\bRENAME\b(?! CONSTRAINT\b)/i.test(s),
    why: 'the previous release still uses the old name',
  },
  {
    name: 'alter-type',
    breaks: (s) => /\bALTER (COLUMN )?\S+ (SET DATA )?TYPE\b/i.test(s) && ALTER_TABLE.test(s),
    why: 'the previous release reads and writes the old type',
  },
  {
    name: 'set-not-null',
    breaks: (s) => /\bSET NOT NULL\b/i.test(s),
    why: 'the previous release may insert rows without it',
  },
  {
    name: 'add-not-null-without-default',
    breaks: (s) =>
      addedColumns(s).some(
        (clause) => /\bNOT NULL\b/i.test(clause) && !/\b(DEFAULT|GENERATED)\b/i.test(clause),
      ),
    why: 'the previous release inserts rows without the new column',
  },
  {
    name: 'drop-default',
    breaks: (s) => ALTER_TABLE.test(s) && /\bDROP DEFAULT\b/i.test(s),
    why: 'the previous release may insert rows relying on the default',
  },
];

/** TypeORM's QueryRunner methods that take away or change a table or a column. */
const CONTRACTING_CALLS = /^(drop|rename|change)(Table|Tables|Column|Columns|View)$/;

/** A statement as the rules read it: dollar-quoted bodies and string literals blanked, one space. */
export function normalise(statement: string): string {
  return statement
    .replace(/\$(\w*)\$[\s\S]*?\$\1\$/g, '$$$$')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/--[^\n]*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The statements a migration's `up` runs (and the QueryRunner calls it makes), without a database. */
export async function statementsOf(migration: MigrationInterface): Promise<string[]> {
  const recorded: string[] = [];
  const runner = new Proxy(
    {},
    {
      get(_, property) {
        if (typeof property !== 'string' || property === 'then') return undefined;
        return (...args: unknown[]) => {
          if (property === 'query') recorded.push(String(args[0]));
          else recorded.push(`-- queryRunner.${property}`);
          return Promise.resolve([]);
        };
      },
    },
  ) as QueryRunner;
  await migration.up(runner);
  return recorded;
}

export interface Refusal {
  migration: string;
  rule: string;
  why: string;
  statement: string;
}

/** What in one migration's statements would break the previous release. */
export function refusalsOf(migration: string, statements: string[]): Refusal[] {
  const refusals: Refusal[] = [];
  for (const statement of statements) {
    const call = /^-- queryRunner\.(\w+)$/.exec(statement)?.[1];
    if (call) {
      if (CONTRACTING_CALLS.test(call))
        refusals.push({
          migration,
          rule: `queryRunner.${call}`,
          why: 'it contracts the schema',
          statement,
        });
      continue;
    }
    const normal = normalise(statement);
    for (const rule of RULES)
      if (rule.breaks(normal))
        refusals.push({ migration, rule: rule.name, why: rule.why, statement });
  }
  return refusals;
}

/** The committed policy: migrations up to `baseline` are released history; `exceptions` are allowed. */
export interface CompatPolicy {
  baseline: string;
  exceptions: CompatException[];
}

export interface CompatException {
  migration: string;
  rule: string;
  /** A piece of the statement's text that picks it out. */
  statement: string;
  /** Why the previous release is unaffected (the release that stopped reading it). */
  reason: string;
}

/** The 13-digit timestamp TypeORM's migration names end with. */
export const timestampOf = (name: string) => Number(/(\d{13})$/.exec(name)?.[1] ?? NaN);

export interface CompatReport {
  /** Migrations newer than the baseline that were checked. */
  checked: string[];
  /** Refusals no exception covers. */
  refused: Refusal[];
  /** Refusals an exception covers, with it. */
  excused: { refusal: Refusal; exception: CompatException }[];
  /** Exceptions that cover nothing (a stale entry, or one for a migration at or before the baseline). */
  stale: CompatException[];
}

/** Checks every migration newer than the policy's baseline. */
export async function checkMigrations(
  migrations: MigrationInterface[],
  policy: CompatPolicy,
): Promise<CompatReport> {
  const baseline = timestampOf(policy.baseline);
  if (Number.isNaN(baseline)) throw new Error(`the baseline ${policy.baseline} names no migration`);
  const report: CompatReport = { checked: [], refused: [], excused: [], stale: [] };
  const used = new Set<CompatException>();
  for (const migration of migrations) {
    const name = migration.name ?? migration.constructor.name;
    if (!(timestampOf(name) > baseline)) continue;
    report.checked.push(name);
    for (const refusal of refusalsOf(name, await statementsOf(migration))) {
      const exception = policy.exceptions.find(
        (e) =>
          e.migration === name &&
          e.rule === refusal.rule &&
          refusal.statement.includes(e.statement),
      );
      if (exception) {
        used.add(exception);
        report.excused.push({ refusal, exception });
      } else report.refused.push(refusal);
    }
  }
  report.stale = policy.exceptions.filter((exception) => !used.has(exception));
  return report;
}
