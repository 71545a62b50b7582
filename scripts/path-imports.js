// `node scripts/path-imports.js [--check] [file or folder …]` (default: src and test): rewrites relative
// imports that climb two folders or more (`../../platform/x.js`), and every import of src/ from test/,
// to the path-based form `#src/platform/x.js` (package.json "imports"; jest maps it in moduleNameMapper).
// Imports within a module and its neighbours (`./x.js`, `../x.js`) stay relative. Then formats the
// files it changed with prettier. Run over the whole tree (no file arguments), it also adds the lint rule
// that keeps it so (eslint.config.js, no-restricted-imports). With --check it changes nothing and exits 1
// when something would change.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const SKIP = [join(SRC, 'generated')];

/** import … from '…', export … from '…', import '…', import('…'), jest.unstable_mockModule('…'). */
const SPECIFIER =
  /(\bfrom\s+|\bimport\s+|\bimport\s*\(\s*|\bunstable_mockModule\s*\(\s*)(['"])(\.{1,2}\/[^'"]*)\2/g;

function tsFiles(path) {
  if (SKIP.includes(path)) return [];
  const stat = statSync(path);
  if (!stat.isDirectory()) return /\.[cm]?ts$/.test(path) ? [path] : [];
  return readdirSync(path).flatMap((name) =>
    name === 'node_modules' ? [] : tsFiles(join(path, name)),
  );
}

/** The `#src/…` form of a specifier, or undefined when it stays as it is. */
export function pathBased(file, specifier) {
  const target = resolve(dirname(file), specifier);
  const underSrc = relative(SRC, target);
  if (underSrc.startsWith('..') || underSrc === '') return undefined;
  const outsideSrc = relative(SRC, file).startsWith('..');
  if (!outsideSrc && !specifier.startsWith('../../')) return undefined;
  return `#src/${underSrc.split(sep).join('/')}${specifier.endsWith('/') ? '/' : ''}`;
}

export function rewrite(file, text) {
  let count = 0;
  const out = text.replace(SPECIFIER, (match, lead, quote, specifier) => {
    const next = pathBased(file, specifier);
    if (!next) return match;
    count++;
    return `${lead}${quote}${next}${quote}`;
  });
  return { out, count };
}

/** The lint rule that keeps the tree path-based, appended to eslint.config.js's list. */
const LINT_RULE = `
  {
    // Imports that leave a module's neighbourhood go by path (#src/…): node scripts/path-imports.js.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\\\.\\\\./\\\\.\\\\./', message: 'Import by path: #src/….' }] },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\\\.\\\\./)+src/', message: 'Import src/ by path: #src/….' }] },
      ],
    },
  },
`;

function addLintRule() {
  const file = join(ROOT, 'eslint.config.js');
  const text = readFileSync(file, 'utf8');
  if (text.includes('no-restricted-imports')) return;
  const end = text.lastIndexOf(');');
  writeFileSync(file, `${text.slice(0, end).trimEnd()}${LINT_RULE});\n`);
  return file;
}

function main(argv) {
  const check = argv.includes('--check');
  const targets = argv.filter((arg) => arg !== '--check');
  const files = (targets.length ? targets : ['src', 'test']).flatMap((t) => tsFiles(resolve(t)));
  const changed = [];
  let total = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const { out, count } = rewrite(file, text);
    if (count === 0) continue;
    changed.push(file);
    total += count;
    if (!check) writeFileSync(file, out);
  }
  process.stdout.write(
    `${check ? 'would rewrite' : 'rewrote'} ${total} imports in ${changed.length} of ${files.length} files\n`,
  );
  if (check) {
    for (const file of changed) process.stdout.write(`  ${relative(ROOT, file)}\n`);
    process.exitCode = changed.length ? 1 : 0;
    return;
  }
  const lintConfig = targets.length ? undefined : addLintRule();
  if (lintConfig) changed.push(lintConfig);
  if (changed.length)
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/prettier/bin/prettier.cjs'), '--write', ...changed],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename))
  main(process.argv.slice(2));
