import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_ENTITIES } from '#src/app-entities.js';
import { findSchemaDrift } from '#src/platform/database/schema-drift.js';
import { runProcess } from '../support/processes.js';
import {
  bearer,
  startTestGateway,
  testDatabaseUrl,
  type TestGateway,
} from '../support/test-gateway.js';

const COMMITTED_SPEC = 'openapi/gateway.json';
const PROBLEM_NOT_FOUND = 'urn:portico:problem:not-found';

type Json = Record<string, unknown>;
interface ProblemResponse {
  path: string;
  method: string;
  status: number;
  hasInput: boolean;
  examples: Record<string, { summary: string; value: Json }>;
}

/** Every problem+json response the committed spec documents, with its examples. */
function problemResponses(): ProblemResponse[] {
  const spec = JSON.parse(readFileSync(COMMITTED_SPEC, 'utf8')) as {
    paths: Record<string, Record<string, Json>>;
  };
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) =>
      Object.entries(operation.responses as Record<string, Json>).flatMap(([status, response]) => {
        const media = (response.content as Record<string, Json> | undefined)?.[
          'application/problem+json'
        ];
        if (!media) return [];
        const hasInput =
          Boolean(operation.requestBody) ||
          ((operation.parameters ?? []) as Json[]).some(
            (p) => p.in === 'path' || (p.required && p.in !== 'cookie'),
          );
        return [
          {
            path,
            method,
            status: Number(status),
            hasInput,
            examples: (media.examples ?? {}) as ProblemResponse['examples'],
          },
        ];
      }),
    ),
  );
}

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
    const result = await runProcess('dist-tools/openapi.js', ['--check'], {});
    expect(result.stdout).toContain('openapi/gateway.json is up to date');
    expect(result.code).toBe(0);
  });

  it('fails the spec check when the committed spec is stale, showing the first difference', async () => {
    const stale = join(mkdtempSync(join(tmpdir(), 'portico-spec-')), 'gateway.json');
    copyFileSync(COMMITTED_SPEC, stale);
    writeFileSync(stale, readFileSync(stale, 'utf8').replace('"getCurrentPrincipal"', '"whoAmI"'));
    const result = await runProcess('dist-tools/openapi.js', ['--check', '--file', stale], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is stale');
    expect(result.stderr).toContain('whoAmI');
  });

  it('shows an example of its own status for every documented problem answer', () => {
    const responses = problemResponses();
    expect(responses.length).toBeGreaterThan(100);
    for (const { path, method, status, hasInput, examples } of responses) {
      const where = `${method.toUpperCase()} ${path} ${status}`;
      const values = Object.values(examples).map((example) => example.value);
      expect([where, values.length > 0]).toEqual([where, true]);
      for (const value of values) {
        expect([where, value.status, typeof value.title, typeof value.type]).toEqual([
          where,
          status,
          'string',
          'string',
        ]);
        expect([where, (value.instance as string).split('/').length]).toEqual([
          where,
          path.split('/').length,
        ]);
        if (status === 400 && hasInput)
          expect([where, (value.errors as unknown[] | undefined)?.length]).toEqual([where, 1]);
        if (status === 404) expect([where, value.type]).toEqual([where, PROBLEM_NOT_FOUND]);
        if (status === 502 || status === 504)
          expect([where, typeof value.upstream]).toEqual([where, 'object']);
      }
    }
    const statuses = new Set(responses.map((r) => r.status));
    expect([...statuses].sort()).toEqual([
      400, 401, 402, 403, 404, 409, 410, 422, 429, 500, 502, 503, 504,
    ]);
  });

  it("shows the answers Portico gives: each provoked problem matches its operation's example", async () => {
    const responses = problemResponses();
    const app = (await gateway.newTenantWithKey('app')).key;
    const operator = (await gateway.newTenantWithKey('operator')).key;
    const cases: {
      method: 'GET' | 'POST';
      path: string;
      url: string;
      key?: string;
      body?: Json;
    }[] = [
      { method: 'GET', path: '/v1/me', url: '/v1/me' },
      { method: 'GET', path: '/v1/tenants', url: '/v1/tenants', key: app },
      {
        method: 'GET',
        path: '/v1/consents/{consentId}',
        url: `/v1/consents/${randomUUID()}`,
        key: app,
      },
      { method: 'POST', path: '/v1/tenants', url: '/v1/tenants', key: operator, body: {} },
      {
        method: 'GET',
        path: '/v1/accounts',
        url: '/v1/accounts',
        key: app,
      },
      {
        method: 'GET',
        path: '/v1/sca/callback/{state}',
        url: `/v1/sca/callback/${'A'.repeat(43)}`,
      },
    ];
    for (const { method, path, url, key, body } of cases) {
      const answer = await gateway.app.inject({
        method,
        url,
        headers: key ? bearer(key) : {},
        ...(body ? { payload: body } : {}),
      });
      const real = answer.json() as Json;
      const documented = responses.find(
        (r) =>
          r.path === path && r.method === method.toLowerCase() && r.status === answer.statusCode,
      );
      const example = Object.values(documented?.examples ?? {})
        .map((e) => e.value)
        .find((value) => value.type === real.type);
      const shape = (problem: Json | undefined) =>
        problem && {
          keys: Object.keys(problem).sort(),
          type: problem.type,
          title: problem.title,
          status: problem.status,
          code: problem.code,
          fields: (problem.errors as { field: string }[] | undefined)?.map((e) => e.field),
        };
      const expected = shape(example);
      if (expected?.fields)
        // The example names one of the fields Portico refuses.
        expected.fields = expect.arrayContaining(expected.fields) as unknown as string[];
      expect([`${method} ${url}`, shape(real)]).toEqual([`${method} ${url}`, expected]);
    }
  });

  it('finds no difference between the entities and the migrated schema', async () => {
    expect(await findSchemaDrift(gateway.dataSource)).toEqual({ up: [], down: [] });
    const result = await runProcess('dist-tools/migrations.js', ['check'], {
      DATABASE_URL: testDatabaseUrl(),
    });
    expect(result).toMatchObject({
      code: 0,
      stdout: 'migrations are up to date with the entities\n',
    });
  });

  // The app's entities are registered by their modules; the migrations see the composed list.
  it('registers in the app exactly the entities the migrations are checked against', () => {
    const names = (entities: readonly { name: string }[]) => entities.map((e) => e.name).sort();
    expect(
      names(gateway.dataSource.entityMetadatas.map((m) => m.target as { name: string })),
    ).toEqual(names(APP_ENTITIES));
  });

  it('reports readiness with the database check', async () => {
    const operator = (await gateway.newTenantWithKey('operator')).key;
    const ready = await gateway.app.inject({
      method: 'GET',
      url: '/health/ready',
      headers: bearer(operator),
    });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', checks: { database: { status: 'ok' } } });
    expect((await gateway.app.inject({ method: 'GET', url: '/health/live' })).json()).toEqual({
      status: 'ok',
    });
  });
});
