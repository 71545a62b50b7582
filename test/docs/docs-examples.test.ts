import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';

const REPO = resolve('.');
/** Every page a reader runs examples from: the README first (its shell is every page's), then docs/. */
const PAGES = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
/** The blocks the test does not run, by the name their marker gives (`<!-- docs-test: skip cli (…) -->`). */
const SKIPPED: Record<string, string> = {
  'starts-portico': 'installs, starts or tests Portico itself',
  cli: "each command starts Portico's application; test/foundation/cli.test.ts runs the CLI",
  production: "the real provider, its keys and files outside the sandbox's reach",
};
/** Where a default start answers: an example that names one instead of the banner's variables. */
const DEFAULT_ADDRESS = /\b(?:127\.0\.0\.1|localhost):(?:3000|8081|8443|8444|8445|9464)\b/;

interface Block {
  /** The HTML comment just before the fence, if any (`<!-- docs-test: … -->`, `<!-- typed-client:… -->`). */
  marker?: string;
  language: string;
  text: string;
  /** `file:line` of the fence, for the failure messages. */
  at: string;
}

/** Every fenced block of a Markdown file, with the marker comment on the line before it. */
function fencedBlocks(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    const marker = /^<!-- (.*) -->$/.exec(lines[i - 1] ?? '')?.[1];
    blocks.push({
      marker,
      language: open[1],
      text: lines.slice(i + 1, end).join('\n'),
      at: `${file}:${i + 1}`,
    });
    i = end;
  }
  return blocks;
}

/** The name of a skipped block (`docs-test: skip cli (…)`), or undefined for a block the test runs. */
const skippedAs = (block: Block) => /^docs-test: skip ([\w-]+)/.exec(block.marker ?? '')?.[1];

/** The shell blocks of a page the test runs: not skipped, not the typed client's (its own test below). */
const runnable = (file: string) =>
  fencedBlocks(file).filter(
    (block) =>
      block.language === 'bash' &&
      skippedAs(block) === undefined &&
      !block.marker?.startsWith('typed-client:'),
  );

/**
 * The statuses a block documents, in order: `# → 201` after each curl, `# → 201 or 409` where either
 * is right (a name an earlier run took).
 */
const documentedStatuses = (text: string) =>
  [...text.matchAll(/# → (\d{3}(?: or \d{3})*)\b/g)].map((match) =>
    match[1].split(' or ').map(Number),
  );

/** Where a command line writes a file: `> x`, `>> x`, `-o x`, `--output x`, `tee x`. */
const WRITTEN = /(?:(?<![=-])>>?|\s-o\s|--output\s|\btee\s)\s*([^\s|;&)][^\s|;)]*)/g;
/** A file an example may write: an absolute path (/dev/null), or under a folder it made (mktemp). */
const SCRATCH = /^(?:\/|"?\$\w+\/)/;

describe('the documents, run as written', () => {
  let dir: string;
  let database: OwnDatabase;
  let gateway: RunningProcess;
  let base: string;
  /** The banner's `export` lines: what a reader pastes before running any example. */
  let exported: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-docs-'));
    database = await ownDatabase('docs');
    // Never a default port: an example that names one instead of the banner's variables fails.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gateway = startProcess('dist/main.js', [], {
      PORT: String(port),
      DATABASE_URL: database.url,
      EMBEDDED_DB_DIR: join(dir, 'data', 'pglite'),
      RECONCILE_ON_START: 'false',
      ...FREE_SANDBOX_PORTS,
    });
    await gateway.waitFor(/Portico is ready/, 120_000);
    await gateway.waitFor(/^export KEY=.*$/m);
    exported = gateway
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('export '))
      .join('\n');
    writeFileSync(join(dir, '.shell-state'), `${exported}\n`);
  }, 180_000);

  afterAll(async () => {
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await database?.drop();
  });

  /**
   * Runs one block in bash in Portico's folder, as a reader does, keeping the shell's variables and
   * functions for the next block (in `state`). Each curl's HTTP status is read from its response headers
   * (`-D`, which the examples leave alone), so that its output and `-w` stay as documented.
   */
  function runBlock(block: Block, state: string): number[] {
    const statuses = join(dir, '.statuses');
    writeFileSync(statuses, '');
    const script = [
      'set -ao pipefail',
      `. ${state}`,
      `curl() { local headers rc=0; headers=$(mktemp); command curl -D "$headers" "$@" || rc=$?; sed -n 's/^HTTP\\/[0-9.]* \\([0-9]*\\).*/\\1/p' "$headers" | tail -n 1 >> ${statuses}; rm -f "$headers"; return $rc; }`,
      'set -e',
      block.text,
      'set +e',
      `{ export -p; declare -f; } > ${state}`,
    ].join('\n');
    const result = spawnSync('bash', ['-c', script], {
      cwd: REPO,
      encoding: 'utf8',
      // Only what a reader's shell has besides the banner's lines: nothing of the test's configuration.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LANG: 'C.UTF-8' },
    });
    if (result.status !== 0)
      throw new Error(`${block.at} failed (${result.status}):\n${block.text}\n${result.stderr}`);
    return readFileSync(statuses, 'utf8').split('\n').filter(Boolean).map(Number);
  }

  /** Runs a page's blocks twice in a row from `state`, checking each call's status against the page. */
  function runPage(file: string, state: string): number {
    let ran = 0;
    for (let round = 1; round <= 2; round++)
      for (const block of runnable(file)) {
        const statuses = runBlock(block, state);
        const documented = documentedStatuses(block.text);
        const matches =
          statuses.length === documented.length &&
          statuses.every((status, index) => documented[index].includes(status));
        expect({ at: block.at, round, statuses }).toEqual({
          at: block.at,
          round,
          statuses: matches ? statuses : documented.map((either) => either.join(' or ')),
        });
        ran++;
      }
    return ran;
  }

  it('prints the lines that set the examples addresses and keys', () => {
    expect(exported).toMatch(
      new RegExp(
        `^export PORTICO=${base} SANDBOX=http://localhost:\\d+ SANDBOX_CARD=https://localhost:\\d+ SANDBOX_POS=https://localhost:\\d+$`,
        'm',
      ),
    );
    expect(exported).toMatch(/^export KEY=ptk_\S+ OPERATOR_KEY=ptk_\S+ AUDITOR_KEY=ptk_\S+$/m);
  });

  it('finds no example naming an address, a key or a placeholder instead of a variable, or writing into the checkout', () => {
    const found: string[] = [];
    for (const file of PAGES) {
      for (const block of fencedBlocks(file).filter((candidate) => candidate.language === 'bash')) {
        const name = skippedAs(block);
        if (name !== undefined && !(name in SKIPPED)) found.push(`${block.at}: skip ${name}?`);
        if (block.marker !== undefined && name === undefined) {
          if (!block.marker.startsWith('typed-client:'))
            found.push(`${block.at}: ${block.marker}?`);
        }
        // The code, not the comments after it (which show answers, with their addresses).
        for (const line of block.text.split('\n').map((text) => text.replace(/(^|\s)#.*$/, ''))) {
          if (DEFAULT_ADDRESS.test(line)) found.push(`${block.at}: ${line}`);
          if (/\$APP_KEY\b/.test(line)) found.push(`${block.at}: ${line}`);
          if (/<[a-z][\w ]*>/.test(line)) found.push(`${block.at}: ${line}`);
          // The examples run in Portico's folder: a scratch file goes elsewhere, never into the checkout.
          for (const [, target] of line.matchAll(WRITTEN))
            if (!SCRATCH.test(target)) found.push(`${block.at}: writes ${target}`);
        }
      }
      for (const [, code] of readFileSync(file, 'utf8').matchAll(/`(curl [^`]+)`/g))
        if (DEFAULT_ADDRESS.test(code)) found.push(`${file}: ${code}`);
    }
    expect(found).toEqual([]);
  });

  const [readme, ...pages] = PAGES;
  /** The README's shell once it ran: where every other page starts (its `json`, its consent). */
  let afterReadme: string;

  it(`runs every shell example of ${readme} twice and gets the status written after each call`, () => {
    const state = join(dir, '.shell-state');
    expect(runPage(readme, state)).toBeGreaterThanOrEqual(8);
    afterReadme = readFileSync(state, 'utf8');
  }, 120_000);

  it.each(pages.filter((page) => runnable(page).length > 0))(
    'runs every shell example of %s twice and gets the status written after each call',
    (page) => {
      expect(afterReadme).toBeDefined();
      const state = join(dir, `.shell-state-${page.replace(/\W/g, '-')}`);
      writeFileSync(state, afterReadme);
      expect(runPage(page, state)).toBeGreaterThan(0);
    },
    120_000,
  );

  it('follows the typed-client instructions as written and prints the documented output', () => {
    const blocks = fencedBlocks('docs/conventions.md');
    const block = (marker: string) => {
      const found = blocks.find((candidate) => candidate.marker === `typed-client:${marker}`);
      if (!found) throw new Error(`no block marked typed-client:${marker} in docs/conventions.md`);
      return found.text;
    };
    const app = join(dir, 'app');
    mkdirSync(join(app, 'bin'), { recursive: true });
    // The one step that would need the registry: `npm install openapi-fetch` links this checkout's copy.
    writeFileSync(
      join(app, 'bin', 'npm'),
      `#!/bin/sh\n[ "$*" = "install openapi-fetch" ] || exit 1\nln -s ${REPO}/node_modules node_modules\n`,
    );
    chmodSync(join(app, 'bin', 'npm'), 0o755);
    writeFileSync(join(app, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['example.ts'],
      }),
    );
    const setup = spawnSync('bash', ['-ec', block('setup')], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, PORTICO_DIR: REPO, PATH: `${join(app, 'bin')}:${process.env.PATH}` },
    });
    expect(setup.stderr).toBe('');
    expect(setup.status).toBe(0);
    writeFileSync(join(app, 'example.ts'), block('example'));
    const compiled = spawnSync(
      process.execPath,
      [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      { cwd: app, encoding: 'utf8' },
    );
    expect(compiled.stdout).toBe('');
    expect(compiled.status).toBe(0);
    const keys = JSON.parse(readFileSync(join(dir, 'data', 'sandbox-keys.json'), 'utf8')) as {
      demo: string;
    };
    const run = spawnSync(process.execPath, ['example.js'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, PORTICO: base, KEY: keys.demo },
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${block('output')}\n`);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

describe('the links between the documents', () => {
  // Written by other work in progress; their links are checked once they exist.
  const ELSEWHERE = ['docs/performance.md', 'docs/tracing.md'];

  it('lead to files and headings that exist', () => {
    const files = ['README.md', ...readdirSync('docs').map((name) => `docs/${name}`)].filter(
      (file) => file.endsWith('.md'),
    );
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const [path, anchor] = (target as string).split('#');
        const resolved = path ? join(dirname(file), path) : file;
        if (!existsSync(resolved)) {
          if (!ELSEWHERE.includes(resolved)) broken.push(`${file}: ${target}`);
          continue;
        }
        if (!anchor) continue;
        const headings = readFileSync(resolved, 'utf8')
          .split('\n')
          .filter((line) => /^#{1,6} /.test(line))
          .map((line) => anchorOf(line.replace(/^#+ /, '')));
        if (!headings.includes(anchor)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keep the README short enough to read in ten minutes', () => {
    expect(readFileSync('README.md', 'utf8').split('\n').length).toBeLessThanOrEqual(350);
  });
});
