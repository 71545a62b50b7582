// `npm run migration:compat`: fails when a migration newer than the baseline would break the previous
// release still running on the same database (a drop, a rename, a type change, a NOT NULL it does not
// fill) and no entry of the exception list names it. `--all` lists what the rules find in the whole
// history, baseline or not (for reading, never failing).
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS } from '#src/platform/database/migrations/index.js';
import { checkMigrations, type CompatPolicy } from './migration-compat/rules.js';

/** The committed baseline and exception list, beside the migrations. */
export const POLICY_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'src',
  'platform',
  'database',
  'migrations',
  'expand-contract.json',
);

async function main(): Promise<void> {
  const all = process.argv.includes('--all');
  const policy = JSON.parse(readFileSync(POLICY_FILE, 'utf8')) as CompatPolicy;
  const migrations = MIGRATIONS.map((Migration) => new Migration());
  const report = await checkMigrations(
    migrations,
    all ? { baseline: 'History0000000000000', exceptions: [] } : policy,
  );
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `checked ${report.checked.length} migration(s) newer than ${all ? 'nothing (--all)' : policy.baseline}` +
      (report.checked.length ? `: ${report.checked.join(', ')}` : ''),
  );
  for (const { refusal, exception } of report.excused)
    out(`excused: ${refusal.migration} ${refusal.rule}: ${exception.reason}`);
  for (const refusal of report.refused)
    process.stderr.write(
      `${all ? 'found' : 'refused'}: ${refusal.migration} ${refusal.rule} (${refusal.why}):\n  ${refusal.statement.replace(/\s+/g, ' ').slice(0, 300)}\n`,
    );
  for (const exception of report.stale)
    process.stderr.write(
      `stale exception (it covers no statement of a migration newer than the baseline): ${JSON.stringify(exception)}\n`,
    );
  if (all) return;
  if (report.refused.length || report.stale.length) {
    process.stderr.write(
      'A release must not take away what the previous release still uses (docs/operations.md, "Upgrading"):\n' +
        'add now, contract one release later, and name the contraction in src/platform/database/migrations/expand-contract.json.\n',
    );
    process.exitCode = 1;
    return;
  }
  out('every migration newer than the baseline keeps the previous release working');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
