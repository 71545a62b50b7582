import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { load } from 'js-yaml';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  type RunningProcess,
  startProcess,
} from '../support/processes.js';

/** One instruction of a Dockerfile: `COPY --from=deps /app/node_modules ./node_modules`. */
interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages, continuation lines joined and comments dropped. */
function stagesOf(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword, args] = line.match(/^(\S+)\s+(.*)$/)!;
    if (keyword!.toUpperCase() === 'FROM') {
      const [, from, name] = args!.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i)!;
      stages.push({ from: from!, name, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push({ keyword: keyword!.toUpperCase(), args: args!.trim() });
    }
  }
  return stages;
}

const stages = stagesOf(readFileSync('Dockerfile', 'utf8'));
const runtime = stages.at(-1)!;
const of = (stage: Stage, keyword: string) =>
  stage.instructions.filter((instruction) => instruction.keyword === keyword);
/** An exec-form argument list (`["node", "dist/main.js"]`). */
const execForm = (args: string): string[] => JSON.parse(args) as string[];

/** The Node flags `npm start` passes (package.json): `exec node <flags> scripts/start.js dist/main.js`. */
function startFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = scripts.start!.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('scripts/start.js'));
}

/** `COPY [--from=stage] source… target` of the runtime stage. */
function copies(stage: Stage): { from?: string; sources: string[]; target: string }[] {
  return of(stage, 'COPY').map(({ args }) => {
    const words = args.split(/\s+/);
    const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
    const paths = words.filter((word) => !word.startsWith('--'));
    return { from, sources: paths.slice(0, -1), target: paths.at(-1)! };
  });
}

describe('the Dockerfile', () => {
  it('builds in stages and the runtime stage takes node_modules from a production-only install', () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    const fromStages = copies(runtime).filter((copy) => copy.from);
    const modules = fromStages.find((copy) => copy.sources.some((s) => s.endsWith('node_modules')));
    const deps = stages.find((stage) => stage.name === modules?.from);
    expect(deps).toBeDefined();
    const installs = of(deps!, 'RUN').flatMap(({ args }) =>
      args.split(/\|\||&&/).filter((command) => /\bnpm (ci|install)\b/.test(command)),
    );
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install).toMatch(/--omit=dev/);
    // The runtime builds nothing and copies no sources: dist/ comes from the build stage.
    expect(
      of(runtime, 'RUN')
        .map((run) => run.args)
        .join('\n'),
    ).not.toMatch(/\bnpm\b|build/);
    expect(copies(runtime).flatMap((copy) => copy.sources)).not.toContain('.');
    expect(copies(runtime).flatMap((copy) => copy.sources)).not.toContain('src');
    const dist = fromStages.find((copy) => copy.sources.some((s) => s.endsWith('/dist')));
    const build = stages.find((stage) => stage.name === dist?.from);
    expect(of(build!, 'RUN').some((run) => run.args.includes('scripts/build.js'))).toBe(true);
  });

  it('runs as an unprivileged user, set before its command', () => {
    const users = of(runtime, 'USER').map((user) => user.args);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    const order = runtime.instructions.map((instruction) => instruction.keyword);
    expect(order.lastIndexOf('USER')).toBeLessThan(order.lastIndexOf('CMD'));
  });

  it('checks the health of the gateway on /health/ready', () => {
    const [check] = of(runtime, 'HEALTHCHECK');
    expect(check?.args).toMatch(/\bCMD\b.*\/health\/ready/);
  });

  it('runs dist/main.js with the same Node flags as npm start', () => {
    expect(startFlags().length).toBeGreaterThan(0);
    const [cmd] = of(runtime, 'CMD');
    expect(execForm(cmd!.args)).toEqual(['node', ...startFlags(), 'dist/main.js']);
    expect(of(runtime, 'ENTRYPOINT')).toEqual([]);
  });

  it('copies from the build context only what exists and .dockerignore lets through', () => {
    const ignored = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((line) => line.trim().replace(/\/$/, ''))
      .filter((line) => line && !line.startsWith('#'));
    for (const stage of stages)
      for (const copy of copies(stage).filter((c) => !c.from))
        for (const source of copy.sources) {
          expect(existsSync(source)).toBe(true);
          expect(
            ignored.filter((path) => source === path || source.startsWith(`${path}/`)),
          ).toEqual([]);
        }
    // What the build must never see: local builds, installs and development certificates.
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'certs/dev', '.git']));
  });
});

describe('docker-compose.yml', () => {
  type Service = { build?: { dockerfile?: string }; command?: string[]; healthcheck?: unknown };
  /** A service with its YAML merge key (`<<: *portico-image`) applied, as Compose does. */
  const merged = (service: Record<string, unknown>): Service => {
    const { '<<': base, ...own } = service;
    return { ...(base ? merged(base as Record<string, unknown>) : {}), ...own } as Service;
  };
  const compose = {
    services: Object.fromEntries(
      Object.entries(
        (load(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, object> })
          .services,
      ).map(([name, service]) => [name, merged(service as Record<string, unknown>)]),
    ),
  };

  it('builds Portico from the Dockerfile and runs the replicas with its command and health check', () => {
    const replicas = Object.entries(compose.services).filter(([name]) =>
      /^portico-\d+$/.test(name),
    );
    expect(replicas.length).toBe(2);
    for (const [, replica] of replicas) {
      expect(replica.build?.dockerfile).toBe('Dockerfile');
      expect(replica.command).toBeUndefined();
      expect(replica.healthcheck).toBeUndefined();
    }
    expect(compose.services.sandbox!.build?.dockerfile).toBe('Dockerfile');
    expect(compose.services.sandbox!.command).toEqual(['node', 'dist/sandbox/main.js']);
  });
});

/**
 * The runtime stage without Docker: the production dependency tree (`npm ls --omit=dev`) linked from
 * node_modules, what the runtime stage copies from the build context, and dist/, in a directory of
 * their own; the image's command started there on a database, and its health check run as Docker would.
 */
describe('the runtime stage, assembled without Docker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-image-'));
  let database: OwnDatabase | undefined;
  let gateway: RunningProcess | undefined;

  afterAll(async () => {
    gateway?.child.kill('SIGKILL');
    await gateway?.exited;
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves and passes its health check with production dependencies only', async () => {
    const production = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
      encoding: 'utf8',
    })
      .split('\n')
      .map((path) => relative(process.cwd(), path))
      .filter((path) => path.startsWith('node_modules/'))
      .sort();
    // The outermost directories only (a nested node_modules comes with its parent), hard-linked.
    const outermost = production.filter(
      (path, index) => !production.slice(0, index).some((parent) => path.startsWith(`${parent}/`)),
    );
    execFileSync('cp', ['-al', '--parents', ...outermost, dir]);
    for (const tool of ['jest', '@swc/core', 'eslint'])
      expect(existsSync(join(dir, 'node_modules', tool))).toBe(false);
    for (const copy of copies(runtime).filter((c) => !c.from))
      for (const source of copy.sources) {
        // Docker's rule: a target ending in / is a directory the source goes into.
        const target = copy.target.endsWith('/')
          ? join(copy.target, basename(source))
          : copy.target;
        cpSync(source, join(dir, target), { recursive: true });
      }
    cpSync('dist', join(dir, 'dist'), { recursive: true });

    // On PostgreSQL a database of its own; else the embedded engine the image runs, in its data/ directory.
    database = process.env.DATABASE_URL ? await ownDatabase('image') : undefined;
    const port = await freePort();
    const [cmd] = of(runtime, 'CMD');
    const [, ...nodeArgs] = execForm(cmd!.args);
    gateway = startProcess(
      nodeArgs.at(-1)!,
      [],
      {
        ...FREE_SANDBOX_PORTS,
        NODE_ENV: 'production',
        ...(database
          ? { DATABASE_URL: database.url }
          : { EMBEDDED_DB_DIR: join(dir, 'data', 'pglite') }),
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        METRICS_PORT: 'off',
        LOG_LEVEL: 'warn',
      },
      { cwd: dir, nodeArgs: nodeArgs.slice(0, -1) },
    );
    await gateway.waitFor(/Demo API key/, 90_000);

    const healthCheck = execForm(of(runtime, 'HEALTHCHECK')[0]!.args.replace(/^.*?\bCMD\s+/, ''));
    const check = spawnSync(
      healthCheck[0] === 'node' ? process.execPath : healthCheck[0]!,
      healthCheck.slice(1),
      {
        env: { PATH: process.env.PATH, PORT: String(port) },
        timeout: 10_000,
      },
    );
    expect(check.status).toBe(0);
    // The development certificates were made inside the directory, as in a container.
    expect(existsSync(join(dir, 'certs/dev/tpp.pem'))).toBe(true);
  }, 180_000);
});
