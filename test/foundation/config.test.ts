import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, VARIABLES } from '#src/platform/config/app-config.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('configuration', () => {
  it('defaults to sandbox mode on 127.0.0.1:3000 with the embedded database', () => {
    const sut = loadConfig({});
    expect(sut.mode).toBe('sandbox');
    expect(sut.http).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      publicBaseUrl: 'http://127.0.0.1:3000',
    });
    expect(sut.database.url).toBeUndefined();
    expect(sut.database.embeddedDir).toBe('./data/pglite');
  });

  it('names each malformed variable and what it must be', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      PORTICO_MODE: 'staging',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'PORT: must be a whole number from 0 to 65535 (got "eighty")',
        'PORTICO_MODE: must be one of sandbox, production (got "staging")',
        expect.stringMatching(/^LOG_LEVEL: must be one of fatal, error/),
        expect.stringMatching(/^DATABASE_URL: must be a postgres: or postgresql: URL/),
      ]),
    );
  });

  it('refuses production mode without the upstream and QWAC variables', () => {
    const problems = problemsOf({ PORTICO_MODE: 'production' });
    for (const name of ['UPSTREAM_OB_BASE_URL', 'UPSTREAM_CA_FILE'])
      expect(problems).toContain(`${name}: required when PORTICO_MODE=production`);
    for (const name of ['UPSTREAM_CLIENT_CERT_FILE', 'UPSTREAM_CLIENT_KEY_FILE']) {
      expect(problems).toContain(
        `${name}: required when PORTICO_MODE=production (or give UPSTREAM_CLIENT_P12_FILE)`,
      );
    }
    const withP12 = problemsOf({
      PORTICO_MODE: 'production',
      UPSTREAM_CLIENT_P12_FILE: '/run/secrets/qwac.p12',
    });
    expect(withP12.some((problem) => problem.startsWith('UPSTREAM_CLIENT_CERT_FILE'))).toBe(false);
  });

  it('reads secrets from *_FILE paths, and says when that file is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-config-'));
    writeFileSync(join(dir, 'db'), 'postgres://app:s3cret@db.internal:5432/portico\n');
    expect(loadConfig({ DATABASE_URL_FILE: join(dir, 'db') }).database.url).toBe(
      'postgres://app:s3cret@db.internal:5432/portico',
    );
    expect(problemsOf({ DATABASE_URL_FILE: join(dir, 'nope') })).toEqual([
      `DATABASE_URL_FILE: cannot read ${join(dir, 'nope')} (ENOENT)`,
    ]);
  });

  it('serves metrics on 127.0.0.1:9464 unless told otherwise, never on the API port', () => {
    expect(loadConfig({}).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0' }).metrics.port).toBe(0);
    expect(loadConfig({ METRICS_PORT: 'off' }).metrics.port).toBeUndefined();
    expect(problemsOf({ METRICS_PORT: 'no' })).toEqual([
      'METRICS_PORT: must be a port from 0 to 65535, or off (got "no")',
    ]);
    expect(problemsOf({ PORT: '9000', METRICS_PORT: '9000' })).toEqual([
      'METRICS_PORT: must differ from PORT (9000); metrics are not served on the API port',
    ]);
  });

  it('reads the previous secrets keys of a rotation from SECRETS_KEYS, naming a malformed one without showing it', () => {
    const hex = 'ab'.repeat(32);
    const base64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ SECRETS_KEYS: `${hex}, ${base64}` }).secrets).toEqual({
      key: undefined,
      previousKeys: [hex, base64],
      resealIntervalMs: 60_000,
    });
    expect(loadConfig({}).secrets.previousKeys).toEqual([]);
    const problems = problemsOf({ SECRETS_KEYS: `${hex},short-secret` });
    expect(problems).toEqual([
      'SECRETS_KEYS: key 2 must be 32 bytes, as 64 hex digits or base64 (not shown)',
    ]);
  });

  it('never repeats a password from a bad URL in its message', () => {
    const [problem] = problemsOf({ DATABASE_URL: 'mysql://app:hunter2@db/x' });
    expect(problem).not.toContain('hunter2');
  });

  it('documents every variable in .env.example, and nothing else', () => {
    const documented = readFileSync('.env.example', 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z][A-Z0-9_]*=/.test(line))
      .map((line) => line.split('=')[0]);
    expect(documented.sort()).toEqual(Object.keys(VARIABLES).sort());
  });
});
