// `npm start` / `npm run sandbox`: build when a source is newer than the last build, then run the entry
// point in this very process. npm runs a script through `sh -c` and passes SIGTERM and SIGINT to that
// shell only, which does not pass them on; so the scripts say `exec node scripts/start.js …`, the shell
// becomes this process, and the signal npm forwards reaches the running gateway.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

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
  config: 'tsconfig.build.json',
  entry,
  info: 'dist/.tsbuildinfo',
  inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
};
const TOOLS = {
  config: 'tools/tsconfig.build.json',
  entry: resolve('dist-tools/bench.js'),
  info: 'dist-tools/.tsbuildinfo',
  inputs: ['tools', 'tsconfig.json', 'dist/.tsbuildinfo', 'package-lock.json'],
};

/** The newest modification time under a file or folder. */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), 0);
}

function needsBuild({ entry, info, inputs }) {
  if (!existsSync(entry) || !existsSync(info)) return true;
  // tsc rewrites its build info whenever it emits; a build that found nothing to do leaves it as it was.
  return Math.max(...inputs.map(newest)) > statSync(info).mtimeMs;
}

/** The TypeScript compiler's entry point, or undefined when it is not installed. */
function compiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/** Runs tsc as `npm run build` does; a signal meanwhile stops it and this process. */
function build({ config }, tsc) {
  const child = spawn(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
  const stop = (signal) => child.kill(signal);
  process.on('SIGTERM', stop).on('SIGINT', stop);
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      process.off('SIGTERM', stop).off('SIGINT', stop);
      if (code === 0) done();
      else
        fail(
          new Error(
            signal ? `the build was stopped (${signal})` : `the build failed (tsc exited ${code})`,
          ),
        );
    });
  });
}

try {
  const tsc = compiler();
  if (PREPARE && (!existsSync('src') || !existsSync(PRODUCT.config) || !tsc)) {
    process.stderr.write(
      'portico: nothing to build here yet (no sources or no compiler); skipped\n',
    );
    process.exit(0);
  }
  for (const project of MODE === '--build-tools' ? [PRODUCT, TOOLS] : [PRODUCT])
    if (needsBuild(project)) {
      if (!tsc)
        throw new Error('the build is missing and TypeScript is not installed (run npm install)');
      // tsc prints nothing while it works: say what the wait is for.
      const started = Date.now();
      const output = project === PRODUCT ? 'dist/' : 'dist-tools/';
      process.stderr.write(`portico: building (TypeScript → ${output}, about 10-20 s)…\n`);
      await build(project, tsc);
      process.stderr.write(`portico: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      // tsc leaves its build info untouched when it found nothing to emit (a file saved unchanged):
      // mark the build current, or every start would run tsc again.
      const now = new Date();
      if (existsSync(project.info)) utimesSync(project.info, now, now);
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
