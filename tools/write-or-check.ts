import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * Writes a generated file, or with `check` compares it with the committed copy: up to date, or stale with
 * the first line that differs and how to regenerate (`source`: what the file is generated from; `command`:
 * the npm script that writes it). Answers whether the file is (now) as generated.
 */
export function writeOrCheck(
  file: string,
  generated: string,
  check: boolean,
  how: { source: string; command: string },
): boolean {
  const shown = relative(process.cwd(), file);
  if (!check) {
    writeFileSync(file, generated);
    process.stdout.write(`wrote ${shown}\n`);
    return true;
  }
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // a missing file differs
  }
  if (committed === generated) {
    process.stdout.write(`${shown} is up to date\n`);
    return true;
  }
  const committedLines = committed.split('\n');
  const generatedLines = generated.split('\n');
  const first = generatedLines.findIndex((line, i) => line !== committedLines[i]);
  process.stderr.write(
    `${shown} is stale: it differs from ${how.source} (first difference at line ${first + 1}).\n` +
      `  committed: ${committedLines[first] ?? '<end of file>'}\n  generated: ${generatedLines[first] ?? '<end of file>'}\n` +
      `Run \`npm run ${how.command}\` and commit the result.\n`,
  );
  return false;
}
