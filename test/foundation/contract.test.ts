import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findSchemaDrift } from '../../src/platform/database/schema-drift.js';
import { runProcess } from '../support/processes.js';
import { startTestGateway, testDatabaseUrl, type TestGateway } from '../support/test-gateway.js';

const COMMITTED_SPEC = 'openapi/gateway.json';

describe('contract and schema checks', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('serves Swagger UI at /docs from local assets, and the spec it serves is the committed one', async () => {
    const page = await gateway.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('swagger-ui');
    expect(page.body).not.toMatch(
      /https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/[^"']*\.(js|css)/i,
    );
    const bundle = await gateway.app.inject({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
    const served = await gateway.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    expect(served.json()).toEqual(JSON.parse(readFileSync(COMMITTED_SPEC, 'utf8')));
  });

  it('passes the spec check when openapi/gateway.json is current', async () => {
    const result = await runProcess('dist/scripts/openapi.js', ['--check'], {});
    expect(result.stdout).toContain('openapi/gateway.json is up to date');
    expect(result.code).toBe(0);
  });

  it('fails the spec check when the committed spec is stale, showing the first difference', async () => {
    const stale = join(mkdtempSync(join(tmpdir(), 'portico-spec-')), 'gateway.json');
    copyFileSync(COMMITTED_SPEC, stale);
    writeFileSync(stale, readFileSync(stale, 'utf8').replace('"getCurrentPrincipal"', '"whoAmI"'));
    const result = await runProcess('dist/scripts/openapi.js', ['--check', '--file', stale], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is stale');
    expect(result.stderr).toContain('whoAmI');
  });

  it('finds no difference between the entities and the migrated schema', async () => {
    expect(await findSchemaDrift(gateway.dataSource)).toEqual({ up: [], down: [] });
    const result = await runProcess('dist/scripts/migrations.js', ['check'], {
      DATABASE_URL: testDatabaseUrl(),
    });
    expect(result).toMatchObject({
      code: 0,
      stdout: 'migrations are up to date with the entities\n',
    });
  });

  it('reports readiness with the database check', async () => {
    const ready = await gateway.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', checks: { database: { status: 'ok' } } });
    expect((await gateway.app.inject({ method: 'GET', url: '/health/live' })).json()).toEqual({
      status: 'ok',
    });
  });
});
