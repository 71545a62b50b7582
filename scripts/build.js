// `npm run build` and the start script's build: TypeScript to JavaScript with SWC, file by file, in a
// second or two where tsc takes tens (type-checking is `npm run typecheck`, in CI and before a commit).
// `node scripts/build.js product` builds src/ into dist/; `tools` builds tools/ into dist-tools/.
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export const TARGETS = {
  product: { from: 'src', to: 'dist', skip: /\.spec\.ts$/ },
  tools: { from: 'tools', to: 'dist-tools', skip: /^$/ },
};

/** Written last: its time is when the build finished (the start script compares sources with it). */
export const STAMP = '.build-stamp';

// What tsconfig.json says, for SWC: Nest's decorators with their design-time types (dependency injection
// reads them), class fields assigned in the constructor (useDefineForClassFields false), ES modules kept.
export const SWC_OPTIONS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6', strict: true },
  sourceMaps: true,
  swcrc: false,
  configFile: false,
};

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

/** Builds one target from scratch; answers how many files it wrote. */
export async function build(name) {
  // Loaded here: the start script reads STAMP from this file where SWC is not installed (production).
  const { transformFile } = await import('@swc/core');
  const { from, to, skip } = TARGETS[name];
  rmSync(to, { recursive: true, force: true });
  const work = [];
  for (const source of files(from)) {
    const out = join(to, relative(from, source));
    if (skip.test(source) || source.endsWith('.d.ts')) continue;
    mkdirSync(dirname(out), { recursive: true });
    if (!source.endsWith('.ts')) {
      copyFileSync(source, out); // plain JavaScript beside the sources (the PGlite server)
      continue;
    }
    const js = out.replace(/\.ts$/, '.js');
    work.push(
      transformFile(source, {
        ...SWC_OPTIONS,
        filename: source,
        sourceFileName: relative(dirname(js), source),
      }).then(({ code, map }) => {
        writeFileSync(js, `${code}\n//# sourceMappingURL=${js.split('/').pop()}.map\n`);
        if (map) writeFileSync(`${js}.map`, map);
      }),
    );
  }
  await Promise.all(work);
  writeFileSync(join(to, STAMP), `${new Date().toISOString()}\n`);
  return work.length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2);
  for (const name of names.length ? names : ['product']) {
    if (!TARGETS[name]) {
      process.stderr.write(`unknown build target: ${name} (product or tools)\n`);
      process.exit(2);
    }
    const started = Date.now();
    const count = await build(name);
    process.stdout.write(
      `built ${count} files into ${TARGETS[name].to}/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  }
}
