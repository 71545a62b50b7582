// `npm start` / `npm run sandbox`: build when a source is newer than the last build, then run the entry
// point in this very process. npm runs a script through `sh -c` and passes SIGTERM and SIGINT to that
// shell only, which does not pass them on; so the scripts say `exec node scripts/start.js …`, the shell
// becomes this process, and the signal npm forwards reaches the running gateway.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { STAMP } from './build.js';

// `node scripts/start.js --build-only`: build when stale and stop (the pre-scripts of cli, …);
// `--build-tools`: the same, then the tooling (tools/ into dist-tools/, read the product from dist/) when
// stale (the pre-scripts of bench, openapi, generate, migration:*, config:docs).
// `--prepare` (npm install's `prepare`): the product's build, so that the first `npm start` finds it made;
// skipped where there is nothing to build yet (a Docker layer holding package.json alone) or no compiler
// (an install without devDependencies).
const MODE = process.argv[2];
const PREPARE = MODE === '--prepare';
const BUILD_ONLY = PREPARE || MODE === '--build-only' || MODE === '--build-tools';
const entry = resolve(BUILD_ONLY ? 'dist/main.js' : (process.argv[2] ?? 'dist/main.js'));
const PRODUCT = {
  target: 'product',
  entry,
  stamp: `dist/${STAMP}`,
  inputs: ['src', 'package-lock.json', 'scripts/build.js'],
};
const TOOLS = {
  target: 'tools',
  entry: resolve('dist-tools/bench.js'),
  stamp: `dist-tools/${STAMP}`,
  inputs: ['tools', `dist/${STAMP}`, 'package-lock.json', 'scripts/build.js'],
};

/** The newest modification time under a file or folder. */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), 0);
}

function needsBuild({ entry, stamp, inputs }) {
  if (!existsSync(entry) || !existsSync(stamp)) return true;
  return Math.max(...inputs.map(newest)) > statSync(stamp).mtimeMs;
}

/** The build (scripts/build.js, SWC), or undefined when SWC is not installed (no devDependencies). */
async function builder() {
  try {
    createRequire(import.meta.url).resolve('@swc/core');
    return (await import('./build.js')).build;
  } catch {
    return undefined;
  }
}

/**
 * Installed packages whose `engines` ask for a newer Node major than this one (`>=22` on Node 20), read
 * from the lockfile: npm has just warned about each (EBADENGINE). Only the plain `>=N` form is read; it
 * is the one they use.
 */
function newerNodeAsked() {
  if (!existsSync('package-lock.json')) return [];
  const major = Number(process.versions.node.split('.')[0]);
  const { packages = {} } = JSON.parse(readFileSync('package-lock.json', 'utf8'));
  return Object.entries(packages)
    .filter(([path, { engines }]) => {
      const asked = /^>=\s*(\d+)/.exec(engines?.node ?? '');
      return path !== '' && asked !== null && Number(asked[1]) > major && existsSync(path);
    })
    .map(([path]) => path.replace(/^.*node_modules\//, ''));
}

if (PREPARE) {
  const asked = newerNodeAsked();
  if (asked.length > 0)
    process.stderr.write(
      `portico: the EBADENGINE warnings above (${asked.join(', ')}) are expected on Node ${process.versions.node}: ` +
        'those packages work on Node 20 and the suite passes there (README, Requirements)\n',
    );
}

try {
  const build = await builder();
  if (PREPARE && (!existsSync('src') || !build)) {
    process.stderr.write(
      'portico: nothing to build here yet (no sources or no compiler); skipped\n',
    );
    process.exit(0);
  }
  for (const project of MODE === '--build-tools' ? [PRODUCT, TOOLS] : [PRODUCT])
    if (needsBuild(project)) {
      if (!build)
        throw new Error('the build is missing and SWC is not installed (run npm install)');
      const started = Date.now();
      const count = await build(project.target);
      const output = project === PRODUCT ? 'dist/' : 'dist-tools/';
      process.stderr.write(
        `portico: built ${count} files into ${output} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }
} catch (error) {
  process.stderr.write(`portico: ${error.message}\n`);
  process.exit(1);
}
if (BUILD_ONLY) process.exit(0);

/**
 * A signal sent to the whole process group (Ctrl-C in a terminal, systemd, docker) reaches this process
 * twice: directly, and again as npm forwards it. The entry point stops on the first, by its own `once`
 * handler; the copy that follows must not kill it halfway through. A signal while the entry point has no
 * handler yet, or one that comes later (Ctrl-C pressed again), does what it would do without this guard.
 */
const ECHO_MS = 1000;
for (const signal of ['SIGINT', 'SIGTERM']) {
  let handledAt = -Infinity;
  const guard = () => {
    if (process.listenerCount(signal) > 1) {
      handledAt = Date.now();
      return;
    }
    if (Date.now() - handledAt < ECHO_MS) return;
    process.removeListener(signal, guard);
    process.kill(process.pid, signal);
  };
  process.on(signal, guard);
}

await import(pathToFileURL(entry).href);
