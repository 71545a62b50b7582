// `npm run openapi` writes the facade's spec to openapi/gateway.json;
// `npm run openapi:check` fails when the committed copy differs from what the code generates.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateGatewaySpec } from '#src/platform/openapi/generate-spec.js';

const DEFAULT_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'openapi', 'gateway.json');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const fileIndex = args.indexOf('--file');
  const file = fileIndex >= 0 ? args[fileIndex + 1] : DEFAULT_FILE;
  const generated = await generateGatewaySpec();
  const shown = relative(process.cwd(), file);
  if (!check) {
    writeFileSync(file, generated);
    process.stdout.write(`wrote ${shown}\n`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // a missing file differs
  }
  if (committed === generated) {
    process.stdout.write(`${shown} is up to date\n`);
    return;
  }
  const committedLines = committed.split('\n');
  const generatedLines = generated.split('\n');
  const first = generatedLines.findIndex((line, i) => line !== committedLines[i]);
  process.stderr.write(
    `${shown} is stale: it differs from the spec the code generates (first difference at line ${first + 1}).\n` +
      `  committed: ${committedLines[first] ?? '<end of file>'}\n  generated: ${generatedLines[first] ?? '<end of file>'}\n` +
      'Run `npm run openapi` and commit the result.\n',
  );
  process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
