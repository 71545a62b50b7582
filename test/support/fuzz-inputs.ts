/**
 * Inputs for the fuzz test: a seeded PRNG and generators of valid-ish and hostile values, driven by the
 * schemas of openapi/gateway.json. Deterministic for a given seed.
 */

import { SeededRandom } from '#src/sandbox/open-banking/bank/seeded-random.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  type?: string;
  format?: string;
  enum?: Json[];
  example?: Json;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

/** The sandbox's seeded mulberry32, with the draws the fuzz test needs. */
export class Random extends SeededRandom {
  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  hex(length: number): string {
    let out = '';
    while (out.length < length) out += this.int(16).toString(16);
    return out;
  }

  uuid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/** Strings an attacker or a careless client sends: unicode of every kind, control bytes, injections. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\ud83d\ude00 emoji',
  'Zoë Ångström',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  'e\u0301\u0301\u0301',
  '\u200b\ufeff',
  '\u0007\u001b[31m',
  'line\nbreak\r\n',
  "' OR 1=1 --",
  '"; DROP TABLE consents; --',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '%00%ff%E0%A4%A',
  '1e308',
  '-0',
  'NaN',
  'true',
  'null',
  '{}',
  '\uffff\ufffe',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
];

export function hostileString(random: Random): string {
  const roll = random.int(10);
  if (roll === 0) return 'x'.repeat(random.pick([101, 257, 2001, 10_000, 60_000]));
  if (roll === 1) return '\ud83d\ude00'.repeat(random.pick([50, 500, 5000]));
  if (roll === 2)
    return Array.from({ length: 20 }, () => String.fromCharCode(random.int(0x10000))).join('');
  return random.pick(HOSTILE_STRINGS);
}

/** Values of the wrong kind for any field. */
export function wrongValue(random: Random): Json {
  return random.pick<() => Json>([
    () => null,
    () => true,
    () => 0,
    () => -1,
    () => 1e308,
    () => -1.5,
    () => 2 ** 53 + 1,
    () => [],
    () => [1, 'two', null],
    () => ({}),
    () => ({ nested: { deeper: [{}] } }),
    () => hostileString(random),
  ])();
}

export function resolve(schema: Schema, components: Record<string, Schema>): Schema {
  let current = schema;
  for (let i = 0; i < 10; i++) {
    if (current.$ref) current = components[current.$ref.split('/').pop()!];
    else if (current.allOf?.length === 1 && !current.properties)
      current = { ...current.allOf[0], ...current, allOf: undefined };
    else break;
  }
  return current;
}

/** A value the schema accepts, or close to it: its example first, else one made from its type. */
export function validValue(
  schema: Schema,
  components: Record<string, Schema>,
  random: Random,
  depth = 0,
): Json {
  const resolved = resolve(schema, components);
  if (resolved.example !== undefined && (depth > 0 || !resolved.properties))
    return structuredClone(resolved.example);
  if (resolved.enum) return random.pick(resolved.enum);
  const options = resolved.oneOf ?? resolved.anyOf;
  if (options) return validValue(random.pick(options), components, random, depth + 1);
  if (resolved.allOf)
    return Object.assign(
      {},
      ...resolved.allOf.map((part) => validValue(part, components, random, depth + 1)),
    ) as Json;
  switch (resolved.type) {
    case 'object': {
      const out: Record<string, Json> = {};
      for (const [name, property] of Object.entries(resolved.properties ?? {}))
        if (resolved.required?.includes(name) || random.chance(0.7))
          out[name] = validValue(property, components, random, depth + 1);
      return out;
    }
    case 'array':
      return resolved.items ? [validValue(resolved.items, components, random, depth + 1)] : [];
    case 'integer':
    case 'number':
      return resolved.minimum ?? 1;
    case 'boolean':
      return random.chance(0.5);
    default:
      if (resolved.format === 'uuid') return random.uuid();
      if (resolved.format === 'date') return '2027-01-31';
      if (resolved.format === 'date-time') return '2026-11-20T10:00:00Z';
      return 'value';
  }
}

/** Every path to a value inside a JSON document, for mutations. */
function paths(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, i) => paths(item, [...prefix, i], out));
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) paths(item, [...prefix, key], out);
  return out;
}

function setAt(root: Json, path: (string | number)[], value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  let parent: Json | undefined = root;
  for (const step of path.slice(0, -1))
    parent = parent && typeof parent === 'object' ? (parent as never)[step] : undefined;
  // An earlier mutation replaced an ancestor: nothing left to change here.
  if (!parent || typeof parent !== 'object') return root;
  const key = path[path.length - 1];
  if (value === undefined) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete (parent as Record<string, Json>)[key];
  } else (parent as never as Record<string | number, Json>)[key] = value;
  return root;
}

export function nested(depth: number, random: Random): Json {
  let value: Json = random.pick<Json>([1, 'leaf', null, {}]);
  for (let i = 0; i < depth; i++) value = random.chance(0.5) ? [value] : { a: value };
  return value;
}

/** A body made hostile: a value replaced, removed, doubled, nested deep, or the whole body swapped. */
export function mutate(body: Json, random: Random): Json {
  const copy = structuredClone(body);
  const all = paths(copy);
  const at = random.pick(all.length > 1 ? all.slice(1) : all);
  switch (random.int(9)) {
    case 0:
      return setAt(copy, at, undefined);
    case 1:
      return setAt(copy, at, wrongValue(random));
    case 2:
      return setAt(copy, at, hostileString(random));
    case 3:
      return setAt(copy, at, nested(random.pick([10, 63, 65, 200]), random));
    case 4:
      return setAt(copy, [...at.slice(0, -1), `extra${random.int(100)}`], wrongValue(random));
    case 5:
      return setAt(copy, at, null);
    case 6:
      return random.pick<Json>([[], [copy], 'body', 42, null, true, {}]);
    case 7: {
      // Every leaf replaced by something hostile.
      for (const path of all)
        if (path.length > 0 && random.chance(0.3)) setAt(copy, path, wrongValue(random));
      return copy;
    }
    default:
      return setAt(copy, at, hostileString(random));
  }
}

/** Bodies that are not JSON, or not quite: what a broken client, a proxy or an attacker sends. */
export function rawBody(body: Json, random: Random): string | Buffer {
  const text = JSON.stringify(body);
  return random.pick<() => string | Buffer>([
    () => text.slice(0, Math.max(1, random.int(text.length))),
    () => `${text}garbage`,
    () => `\ufeff${text}`,
    () => text.replace('{', '{"__proto__":{"polluted":true},'),
    () => text.replace('{', '{"constructor":{"prototype":{"polluted":true}},'),
    () => text.replace(/"([a-zA-Z]+)":/, '"$1":1,"$1":'),
    () =>
      Buffer.concat([
        Buffer.from(text.slice(0, -1)),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('}'),
      ]),
    () => '',
    () => 'null',
    () => '[]',
    () => "{'single':'quotes'}",
    () => `${'['.repeat(5000)}${']'.repeat(5000)}`,
    () => `{"a":"${'\\ud800'.repeat(10)}"}`,
    () => `{"a":1e99999}`,
    () => `{"a":${'9'.repeat(400)}}`,
    () => '\u0000\u0000',
  ])();
}

/**
 * encodeURIComponent that takes any string: a lone surrogate, which it refuses, becomes the three bytes
 * UTF-8 would give it were it a character (%ED%A0%80): not UTF-8 at all, which is the point.
 */
export function percentEncode(text: string): string {
  return text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[^\uD800-\uDFFF]+|[\uD800-\uDBFF][\uDC00-\uDFFF]/g,
    (part) => {
      if (part.length !== 1 || part.charCodeAt(0) < 0xd800 || part.charCodeAt(0) > 0xdfff)
        return encodeURIComponent(part);
      const code = part.charCodeAt(0);
      return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    },
  );
}
