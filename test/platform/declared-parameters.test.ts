import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

interface Schema {
  type?: string;
  format?: string;
  enum?: unknown[];
  example?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}
interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  example?: unknown;
  schema?: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
}

const spec = JSON.parse(readFileSync('openapi/gateway.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};

/** Texts tried, in order, for a string whose schema gives neither example, enum nor format. */
const CANDIDATES = [
  'abc12345',
  'trm_abc12345',
  'Captured',
  '127.0.0.1',
  'a'.repeat(43),
  'ABCDE12345',
  '2026-11-01',
  '0b5f4a2e-8c1d-4f3a-9b7e-2d6c1a0f3e59',
];

/** A value the parameter's own schema accepts, or undefined when the spec gives nothing to build one from. */
function validValue(parameter: Parameter): string | undefined {
  const schema = parameter.schema ?? {};
  const fits = (text: string) =>
    (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(text)) &&
    text.length >= (schema.minLength ?? 0) &&
    text.length <= (schema.maxLength ?? Infinity);
  if (parameter.example !== undefined) return String(parameter.example);
  if (schema.example !== undefined) return String(schema.example);
  if (schema.enum?.length) return String(schema.enum[0]);
  if (schema.type === 'integer' || schema.type === 'number')
    return String(schema.minimum ?? schema.default ?? 1);
  if (schema.type === 'boolean') return 'true';
  if (schema.format === 'uuid') return randomUUID();
  if (schema.format === 'date') return '2026-11-01';
  if (schema.format === 'date-time') return '2026-11-01T00:00:00Z';
  return CANDIDATES.find(fits);
}

const operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.entries(methods)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);

/**
 * The positive side of the fuzz test: every operation of the committed facade spec, called with each
 * parameter it declares set to a value its own schema accepts, never refuses one of them as unknown or
 * invalid. A declared parameter the code refuses (a design type that is not the query's class, a
 * whitelist that misses a field) fails here.
 */
describe('every declared parameter, given a valid value', () => {
  let sut: TestGateway;
  const keys: string[] = [];
  beforeAll(async () => {
    sut = await startTestGateway();
    for (const role of ['app', 'admin', 'operator', 'auditor'] as const)
      keys.push((await sut.newTenantWithKey(role)).key);
  }, 120_000);
  afterAll(() => sut.close());

  it('has a value for every declared parameter', () => {
    const missing = operations.flatMap(({ operation }) =>
      (operation.parameters ?? [])
        .filter((parameter) => validValue(parameter) === undefined)
        .map((parameter) => `${operation.operationId}: ${parameter.in} ${parameter.name}`),
    );
    expect(missing).toEqual([]);
  });

  it.each(operations.map((entry) => [entry.operation.operationId, entry] as const))(
    '%s accepts them all',
    async (_id, { path, method, operation }) => {
      const parameters = operation.parameters ?? [];
      let url = path;
      const query = new URLSearchParams();
      const headers: Record<string, string> = {};
      for (const parameter of parameters) {
        // An Idempotency-Key is unique per request (its description): one repeated across operations
        // answers 422 "reused" before the operation's parameters are looked at.
        const value =
          parameter.name.toLowerCase() === 'idempotency-key'
            ? randomUUID()
            : validValue(parameter)!;
        if (parameter.in === 'path')
          url = url.replace(`{${parameter.name}}`, encodeURIComponent(value));
        else if (parameter.in === 'query') query.set(parameter.name, value);
        else headers[parameter.name.toLowerCase()] = value;
      }
      const target = query.size ? `${url}?${query}` : url;
      // The first role the operation lets in (guards answer before the parameters are checked).
      let answer:
        { statusCode: number; body: string; headers: Record<string, unknown> } | undefined;
      for (const key of keys) {
        answer = await sut.app.inject({
          method: method as 'GET',
          url: target,
          headers: { ...bearer(key), ...headers },
        });
        if (answer.statusCode !== 401 && answer.statusCode !== 403) break;
      }
      const status = answer!.statusCode;
      // Judged on every answer, whatever its status: let in by a role, no 500, and a refusal of any
      // kind (400, 404, 422, …) names none of the declared parameters.
      expect({ target, status: [401, 403, 500].includes(status) ? status : 'answered' }).toEqual({
        target,
        status: 'answered',
      });
      const problem = (
        String(answer!.headers['content-type']).includes('application/problem+json')
          ? JSON.parse(answer!.body)
          : {}
      ) as {
        type?: string;
        detail?: string;
        errors?: { field?: string; in?: string; message?: string }[];
      };
      const names = new Set(parameters.map((parameter) => parameter.name.toLowerCase()));
      const refused = (problem.errors ?? []).filter((error) =>
        names.has(
          String(error.field ?? '')
            .replace(/^header:/, '')
            .toLowerCase(),
        ),
      );
      expect({ target, refused, type: problem.type, detail: problem.detail }).toEqual({
        target,
        refused: [],
        type: expect.not.stringMatching(/idempotency-key-reused/) as unknown,
        detail: expect.not.stringMatching(/should not exist/) as unknown,
      });
    },
  );
});
