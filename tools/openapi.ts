// `npm run openapi` writes the facade's spec to openapi/gateway.json;
// `npm run openapi:check` fails when the committed copy differs from what the code generates.
import 'reflect-metadata';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateGatewaySpec } from '#src/platform/openapi/generate-spec.js';
import { writeOrCheck } from './write-or-check.js';

const DEFAULT_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'openapi', 'gateway.json');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const fileIndex = args.indexOf('--file');
  const file = fileIndex >= 0 ? args[fileIndex + 1] : DEFAULT_FILE;
  const generated = await generateGatewaySpec();
  const ok = writeOrCheck(file, generated, check, {
    source: 'the spec the code generates',
    command: 'openapi',
  });
  if (!ok) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
