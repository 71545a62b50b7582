import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROBLEM_TITLES, problemTitle } from '#src/platform/errors/problem-titles.js';

type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Operation {
  operationId: string;
  responses?: Record<string, { content?: Record<string, { schema?: Schema; examples?: Schema }> }>;
}

const spec = JSON.parse(readFileSync('openapi/gateway.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const schemas = spec.components.schemas;
const resolve = (schema: Schema | undefined): Schema | undefined => {
  let current = schema;
  for (let depth = 0; current?.$ref && depth < 10; depth++)
    current = schemas[String(current.$ref).split('/').pop()!];
  return current?.allOf?.length === 1 && !current.type ? resolve(current.allOf[0]) : current;
};
const operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
);

/** Every property of every schema of the spec (components, and inline in answers), by its path. */
function properties(): { at: string; name: string; schema: Schema }[] {
  const out: { at: string; name: string; schema: Schema }[] = [];
  const walk = (schema: unknown, at: string) => {
    if (!schema || typeof schema !== 'object') return;
    if (Array.isArray(schema)) return schema.forEach((item) => walk(item, at));
    const record = schema as Schema;
    for (const [name, inner] of Object.entries((record.properties ?? {}) as Schema)) {
      out.push({ at: `${at}.${name}`, name, schema: inner as Schema });
      walk(inner, `${at}.${name}`);
    }
    for (const [key, inner] of Object.entries(record))
      if (key !== 'properties' && key !== 'example' && key !== 'examples') walk(inner, at);
  };
  for (const [name, schema] of Object.entries(schemas)) walk(schema, name);
  for (const { path, method, operation } of operations)
    for (const [status, response] of Object.entries(operation.responses ?? {}))
      for (const content of Object.values(response.content ?? {}))
        walk(content.schema, `${method.toUpperCase()} ${path} ${status}`);
  return out;
}

/** A name that reads as a point in time (or a calendar day): `createdAt`, `dateCreated`, `transactionTime`. */
const TIME_NAME =
  /(At|Time|Timestamp|Stamp|Date|DateTime|Created|Modified|Deposited|Onboarded|Since|Until)$|^(date|time)(?![a-z])/;

/** The Berlin Group reads keep the standard's own shape (`accounts`, `transactions.booked`): see conventions.md. */
const BERLIN_GROUP_LISTS = new Set(['listAccounts']);

describe('the facade spec holds the conventions of docs/conventions.md', () => {
  it('declares every timestamp `format: date-time` and every calendar day `format: date`', () => {
    const times = properties().filter(
      ({ name, schema }) => TIME_NAME.test(name) && resolve(schema)?.type === 'string',
    );
    expect(times.length).toBeGreaterThan(80);
    const undeclared = times
      .filter(({ schema }) => !['date-time', 'date'].includes(resolve(schema)?.format))
      .map(({ at }) => at);
    expect(undeclared).toEqual([]);
  });

  it("lets no answer's timestamp take a provider's spelling", () => {
    const spellings = ['2026-11-28T05:56:01+0000', '2026-11-28 05:56:01', '2026-11-28 05:58:15 AM'];
    const loose = properties()
      .map(({ at, schema }) => ({ at, schema: resolve(schema) }))
      .filter(({ schema }) => schema?.format === 'date-time' && schema.pattern)
      .filter(({ at }) => !/Form\.|Request\./.test(at))
      .filter(({ schema }) => {
        const pattern = new RegExp(schema!.pattern as string, 'u');
        return !pattern.test('2026-11-28T05:56:01Z') || spellings.some((s) => pattern.test(s));
      })
      .map(({ at }) => at);
    expect(loose).toEqual([]);
  });

  it('answers every list as {totalCount, items}', () => {
    const lists = operations.filter(
      ({ method, operation }) =>
        method === 'get' &&
        operation.operationId.startsWith('list') &&
        !BERLIN_GROUP_LISTS.has(operation.operationId),
    );
    expect(lists.length).toBeGreaterThanOrEqual(25);
    const odd = lists
      .map(({ operation }) => {
        const answer = resolve(operation.responses?.['200']?.content?.['application/json']?.schema);
        const props = (answer?.properties ?? {}) as Schema;
        const fine =
          resolve(props.items)?.type === 'array' &&
          ['integer', 'number'].includes(resolve(props.totalCount)?.type) &&
          answer?.required?.includes('totalCount') &&
          answer?.required?.includes('items');
        return fine ? undefined : `${operation.operationId}: ${Object.keys(props).join(', ')}`;
      })
      .filter(Boolean);
    expect(odd).toEqual([]);
  });

  it('gives embedded lists the same envelope: an `items` array has its `totalCount`, and no `{count, data}`', () => {
    const odd = Object.entries(schemas)
      .filter(([, schema]) => {
        const props = (schema.properties ?? {}) as Schema;
        const hasItems = resolve(props.items)?.type === 'array';
        return (hasItems && !props.totalCount) || (props.data && props.count) || props.total;
      })
      .map(([name]) => name);
    expect(odd).toEqual([]);
  });

  it('answers every error as problem+json, each type with the one title of the registry', () => {
    const notProblem: string[] = [];
    const titles = new Map<string, Set<string>>();
    for (const { path, method, operation } of operations)
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!/^[45]/.test(status)) continue;
        // A load balancer's probe reads `{status: "fail"}`: the one answer that is no problem.
        if (path === '/health/ready') continue;
        const content = response.content ?? {};
        if (!content['application/problem+json'] || Object.keys(content).length !== 1)
          notProblem.push(`${method} ${path} ${status}`);
        for (const media of Object.values(content))
          for (const example of Object.values((media.examples ?? {}) as Schema)) {
            const { type, title } = (example as Schema).value as { type: string; title: string };
            if (!titles.has(type)) titles.set(type, new Set());
            titles.get(type)!.add(title);
            expect({ type, title }).toEqual({ type, title: problemTitle(type, Number(status)) });
          }
      }
    expect(notProblem).toEqual([]);
    expect([...titles].filter(([, set]) => set.size > 1)).toEqual([]);
    expect(titles.size).toBeGreaterThan(15);
  });

  it('registers every problem type the code answers with', () => {
    // `urn:portico:problem:consent:${code}` is a Berlin Group code's type, titled by the code.
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? entry.name === 'generated'
            ? []
            : files(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [join(dir, entry.name)]
            : [],
      );
    const used = new Set(
      files('src').flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/urn:portico:problem:[a-z][a-z:-]*[a-z]/g)].map(
          (match) => match[0],
        ),
      ),
    );
    const unregistered = [...used].filter(
      (type) =>
        !PROBLEM_TITLES[type] &&
        type !== 'urn:portico:problem:consent' &&
        !/^urn:portico:problem:consent:[a-z-]+$/.test(type),
    );
    expect(unregistered).toEqual([]);
    expect(used.size).toBeGreaterThan(25);
  });
});
