import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { VARIABLE_GROUPS, VARIABLES } from '#src/platform/config/app-config.js';
import { renderConfigurationMarkdown, renderEnvExample } from '../../tools/config-docs.js';

/** Generated code reads no environment; tooling (tools/, its BENCH_* settings with the bench) is not scanned. */
const TOOLING = ['src/generated'];
/**
 * Read from the environment but not configuration: how a cluster primary hands its workers the
 * configuration it resolved (src/platform/cluster/gateway-workers.ts).
 */
const INTERNAL = ['PORTICO_WORKER_CONFIG', 'PORTICO_WORKER_INDEX', 'PORTICO_WORKER_BANNER'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (TOOLING.includes(path)) return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every variable a source file reads: process.env.X, process.env['X'], process.env[CONST]. */
function variablesRead(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const constants = new Map(
    [...text.matchAll(/const ([A-Z_][A-Z0-9_]*) = '([A-Z][A-Z0-9_]*)'/g)].map((m) => [m[1], m[2]]),
  );
  const names: string[] = [];
  for (const [, dotted, quoted, constant] of text.matchAll(
    /process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([^'"]+)['"]\s*\]|\[\s*([A-Za-z_][A-Za-z0-9_]*)\s*\])/g,
  )) {
    if (dotted ?? quoted) names.push((dotted ?? quoted) as string);
    else names.push(constants.get(constant as string) ?? `<process.env[${constant}]>`);
  }
  // Code handed the environment as a whole (loadConfig(env), sandboxOptionsFromEnv(env)) reads env.X.
  if (/\(env: Env|env: Record<string, string \| undefined>/.test(text))
    for (const [, name] of text.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.push(name as string);
  return names;
}

describe('the configuration reference', () => {
  it('is docs/configuration.md and .env.example as the variable table renders them (npm run config:docs)', () => {
    expect(readFileSync('docs/configuration.md', 'utf8')).toBe(renderConfigurationMarkdown());
    expect(readFileSync('.env.example', 'utf8')).toBe(renderEnvExample());
  });

  it('places every variable of the table in exactly one group', () => {
    const grouped = VARIABLE_GROUPS.flatMap((group) => group.names);
    expect([...grouped].sort()).toEqual(Object.keys(VARIABLES).sort());
    expect(new Set(grouped).size).toBe(grouped.length);
  });

  it('holds every variable the code reads from the environment', () => {
    const read = sourceFiles('src').flatMap((file) =>
      variablesRead(file).map((name) => ({ file, name })),
    );
    // The scan finds what it looks for: the config loader and the sandbox's own reader.
    expect(read.map((r) => r.name)).toEqual(expect.arrayContaining(['SANDBOX_SCA_PUBLIC_URL']));
    const missing = read.filter(({ name }) => !(name in VARIABLES) && !INTERNAL.includes(name));
    expect(missing).toEqual([]);
  });
});
