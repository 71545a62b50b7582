import { ApiProperty } from '@nestjs/swagger';
import type {
  FieldProblem,
  OpenApiContract,
  Schema,
} from '#src/shared/contracts/openapi-contract.js';
import { oneSourceRuleOf, sourcesGiven } from '#src/shared/contracts/one-source.js';
import { RFC3339_UTC_SCHEMA, toRfc3339Utc } from '../common/rfc3339.js';
import { UpstreamSchemas } from './upstream-schema.decorator.js';

/**
 * Marks a provider's timestamp in an upstream spec: `true` on an answer's (the facade gives it as RFC 3339
 * in UTC), `request` on one an app sends (documented as `format: date-time`, passed on as it is).
 */
const TIMESTAMP = 'x-portico-timestamp';

/**
 * The facade's name of a declared property: its camelCase, or the name an upstream spec gives it with
 * `x-portico-facade-name` (a provider's embedded `{count, data}` list is `{totalCount, items}`). A dotted
 * name nests a flat form field in the object the answer has (`business_name` is `business.name`).
 */
const facadeNameOf = (name: string, schema: Schema | undefined): string =>
  typeof schema?.['x-portico-facade-name'] === 'string'
    ? schema['x-portico-facade-name']
    : camelCase(name);

/** `card_number` → `cardNumber`. */
export const camelCase = (name: string) =>
  name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** `card_number` → `cardNumber`, as a type (`camelCase` of a name). */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/**
 * A value of a snake_case contract schema as the facade gives it (`toFacade`), as a type: property
 * names in camelCase, at every depth; the keys of free-form maps (index signatures) as they are.
 */
export type Camelized<T> = T extends readonly (infer E)[]
  ? Camelized<E>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelCase<K> : K]: Camelized<T[K]> }
    : T;

/** A schema's declared properties by the name each side gives them (`[other side's name, schema]`). */
interface RenamePlan {
  toUpstream: Map<string, [string, Schema]>;
  toFacade: Map<string, [string, Schema]>;
  /** Facade objects holding flat upstream fields (`business` → `name` → `business_name`). */
  groups: Map<string, Map<string, [string, Schema]>>;
  additional?: Schema;
  items?: Schema;
}

const NO_PLAN: RenamePlan = { toUpstream: new Map(), toFacade: new Map(), groups: new Map() };

/** A text list of the provider (`monday,thursday`) the facade takes as an array, joined by this. */
const JOINED = 'x-portico-facade-joined';
/** An object of the provider whose fields the facade gives one level up (`{marketplace: {…}}`). */
const FLATTENED = 'x-portico-facade-flattened';

/**
 * A snake_case upstream contract seen through a camelCase facade, driven by the contract's own schemas
 * (never a copied field list): declared property names are renamed both ways, everything else (the keys
 * of free-form maps such as `metadata`, the values) passes as it is. The facade's spec gets camelCase
 * copies of the contract schemas it uses (`Card…`), so that docs, validation and mapping share one source.
 */
export class CamelCaseSchemas extends UpstreamSchemas {
  private readonly plans = new WeakMap<Schema, RenamePlan>();
  private readonly timestamps = new WeakMap<Schema, boolean>();

  constructor(contract: OpenApiContract, prefix: string) {
    super(contract, prefix);
  }

  /** A facade value (camelCase) as the contract's (snake_case), per the contract schema `name`. */
  toUpstream(name: string, value: unknown): unknown {
    return this.rename(this.contract.schemas[name], value, 'toUpstream');
  }

  /** An upstream answer (snake_case) as the facade gives it (camelCase), per the contract schema `name`. */
  toFacade(name: string, value: unknown): unknown {
    return this.rename(this.contract.schemas[name], value, 'toFacade');
  }

  /**
   * Checks a facade body against the contract schema `name`; problems name the facade's (camelCase)
   * fields. Answers the upstream form of the body when it is valid.
   */
  check(name: string, body: unknown): { value: unknown; problems: FieldProblem[] } {
    const refused: FieldProblem[] = [];
    const root = this.planOf(this.contract.schemas[name]).toFacade;
    // A name of the contract as the app spells it: a top-level field by its facade name (maybe nested).
    const spelled = (part: string, top: boolean) =>
      (top ? root.get(part)?.[0] : undefined) ?? camelCase(part);
    const value = this.rename(this.contract.schemas[name], body, 'toUpstream', '', refused);
    const problems = [
      ...refused,
      ...this.contract
        .validate({ $ref: `#/components/schemas/${name}` }, value, '')
        .map((problem) => {
          const parts = problem.path.replace(/^\./, '').split('.');
          const path = parts.map((part, index) => spelled(part, index === 0)).join('.');
          // The contract's messages quote its own (snake_case) names; the app sent the facade's.
          const message = problem.message.replace(
            /'([a-z][a-z0-9]*(?:_[a-z0-9]+)+)'/g,
            (_quoted, quoted: string) => `'${spelled(quoted, parts[0] === '')}'`,
          );
          return { path, message };
        }),
    ];
    if (problems.length === 0) problems.push(...this.sourceProblems(name, value, spelled));
    return { value, problems };
  }

  /**
   * A form that takes exactly one source (`x-portico-one-source`) refused before the provider is
   * called, naming the facade's fields: neither is required of each group's first field, both refuses
   * the last group's.
   */
  private sourceProblems(
    name: string,
    value: unknown,
    spelled: (part: string, top: boolean) => string,
  ): FieldProblem[] {
    const rule = oneSourceRuleOf(this.contract.schemas, this.contract.schemas[name]);
    if (!rule || !value || typeof value !== 'object') return [];
    const given = sourcesGiven(rule, value as Record<string, unknown>).length;
    if (given === 1) return [];
    const groups = rule.groups.map((group) => group.map((field) => spelled(field, true)));
    const listed = groups.map((group) => (group.length > 1 ? `(${group.join(', ')})` : group[0]));
    if (given === 0)
      return groups.map((group) => ({
        path: group[0],
        message: `is required: give one of ${listed.join(' or ')}`,
      }));
    const last = groups[groups.length - 1];
    return [
      {
        path: last[0],
        message: `is not allowed with ${listed.filter((_, i) => i < groups.length - 1).join(' or ')}: give one of them`,
      },
    ];
  }

  /** The contract schemas the facade uses, renamed and with camelCase property names. */
  override usedSchemas(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(super.usedSchemas()))
      out[name] = this.camelSchema(schema as Schema);
    return out;
  }

  /** A schema of the contract with its top-level `$ref`s followed. */
  resolveSchema(schema: Schema): Schema {
    return this.resolve$ref(schema) ?? schema;
  }

  /** Swagger's own decorator for a property documented as a contract schema. */
  property(name: string): PropertyDecorator {
    return ApiProperty({ allOf: [this.ref(name)] });
  }

  private camelSchema(schema: Schema): Schema {
    // A bare reference stays one: the schema it names is rewritten where it is defined.
    const named = (ref: string) => ref.replace(`#/components/schemas/${this.prefix}`, '');
    if (!schema.$ref && this.isTimestamp(schema, named))
      return {
        // The provider's spelling (`YYYY-MM-DD hh:mm:ss`) is no description of the facade's.
        ...(typeof schema.description === 'string' && !schema.description.startsWith('`YYYY')
          ? { description: schema.description }
          : {}),
        ...(schema.nullable ? { nullable: true } : {}),
        ...RFC3339_UTC_SCHEMA,
      };
    const out: Schema = schema[TIMESTAMP] === 'request' ? { format: 'date-time' } : {};
    for (const [key, value] of Object.entries(schema)) {
      if (key.startsWith('x-')) continue;
      if (key === 'properties' && value && typeof value === 'object') {
        const { properties, required } = this.facadeProperties(schema);
        out.properties = properties;
        if (required.length) out.required = required;
      } else if (key === 'required' && schema.properties) continue;
      else if (key === 'required' && Array.isArray(value))
        out.required = (value as string[]).map(camelCase);
      // The facade gives one spelling: the upstream's alternatives (`x-portico-spellings`) are read as it.
      else if (key === 'enum' && Array.isArray(value))
        out.enum = value.filter(
          (item) =>
            !Object.hasOwn(
              (schema['x-portico-spellings'] as object | undefined) ?? {},
              String(item),
            ),
        );
      else if (key === 'example' || key === 'default') out[key] = value;
      else if (Array.isArray(value))
        out[key] = value.map((item: unknown) =>
          item && typeof item === 'object' ? this.camelSchema(item as Schema) : item,
        );
      else if (value && typeof value === 'object') out[key] = this.camelSchema(value as Schema);
      else out[key] = value;
    }
    return out;
  }

  /**
   * A schema's properties as the facade documents them, with the ones it requires: renamed, nested where a
   * facade name is dotted, lifted where the provider's object is flattened, a joined text list an array.
   */
  private facadeProperties(schema: Schema): {
    properties: Record<string, Schema>;
    required: string[];
  } {
    const declared = (schema.properties ?? {}) as Record<string, Schema>;
    const needed = new Set((schema.required as string[] | undefined) ?? []);
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const [property, inner] of Object.entries(declared)) {
      if (inner[FLATTENED]) {
        const lifted = this.camelSchema(inner);
        Object.assign(properties, lifted.properties);
        required.push(...((lifted.required as string[] | undefined) ?? []));
        continue;
      }
      const joined = this.joinedOf(this.contractOf(inner));
      const documented = joined
        ? {
            ...(inner.description ? { description: inner.description } : {}),
            type: 'array',
            maxItems: 100,
            items: this.camelSchema(inner.allOf ? (inner.allOf as Schema[])[0] : inner),
          }
        : this.camelSchema(inner);
      const [group, field] = facadeNameOf(property, inner).split('.');
      if (field === undefined) {
        properties[group] = documented;
        if (needed.has(property)) required.push(group);
        continue;
      }
      const nested = (properties[group] ??= {
        type: 'object',
        additionalProperties: false,
        properties: {},
      });
      (nested.properties as Record<string, Schema>)[field] = documented;
      if (needed.has(property)) {
        nested.required = [...((nested.required as string[] | undefined) ?? []), field];
        if (!required.includes(group)) required.push(group);
      }
    }
    return { properties, required };
  }

  /** The contract's schema a facade copy refers to (its `$ref` named as the contract names it). */
  private contractOf(schema: Schema): Schema {
    const named = (part: Schema) =>
      typeof part.$ref === 'string'
        ? {
            $ref: part.$ref.replace(`#/components/schemas/${this.prefix}`, '#/components/schemas/'),
          }
        : part;
    return schema.allOf
      ? { ...schema, allOf: (schema.allOf as Schema[]).map(named) }
      : named(schema);
  }

  /** The separator of a text list the facade takes as an array (`x-portico-facade-joined`), if it is one. */
  private joinedOf(schema: Schema): string | undefined {
    const parts = [schema, ...((schema.allOf as Schema[] | undefined) ?? [])];
    for (const part of parts) {
      const resolved = this.resolve$ref(part);
      if (typeof resolved?.[JOINED] === 'string') return resolved[JOINED];
    }
    return undefined;
  }

  /**
   * Whether a schema is a provider's timestamp: marked itself, or through its `$ref` or an `allOf` part.
   * `nameOf` reads a schema's name from a reference (the facade's copies carry the facade's names).
   */
  private isTimestamp(
    schema: Schema | undefined,
    nameOf: (ref: string) => string = (ref) => ref.replace('#/components/schemas/', ''),
  ): boolean {
    if (!schema || typeof schema !== 'object') return false;
    const known = this.timestamps.get(schema);
    if (known !== undefined) return known;
    const parts = [
      ...(typeof schema.$ref === 'string' ? [this.contract.schemas[nameOf(schema.$ref)]] : []),
      ...((schema.allOf as Schema[] | undefined) ?? []),
    ];
    const found =
      schema[TIMESTAMP] === true || parts.some((part) => this.isTimestamp(part, nameOf));
    this.timestamps.set(schema, found);
    return found;
  }

  private resolve$ref(schema: Schema | undefined): Schema | undefined {
    let current = schema;
    for (let depth = 0; current?.$ref && depth < 10; depth++)
      current = this.contract.schemas[String(current.$ref).replace('#/components/schemas/', '')];
    return current;
  }

  /** The declared properties of a schema, through `$ref` and `allOf` / `oneOf` / `anyOf`. */
  private propertiesOf(schema: Schema | undefined): {
    properties: Record<string, Schema>;
    additional?: Schema;
    items?: Schema;
  } {
    const resolved = this.resolve$ref(schema);
    if (!resolved) return { properties: {} };
    const properties = { ...((resolved.properties as Record<string, Schema>) ?? {}) };
    let additional =
      typeof resolved.additionalProperties === 'object'
        ? (resolved.additionalProperties as Schema)
        : undefined;
    let items = resolved.items as Schema | undefined;
    for (const combinator of ['allOf', 'oneOf', 'anyOf'])
      for (const part of (resolved[combinator] as Schema[] | undefined) ?? []) {
        const inner = this.propertiesOf(part);
        Object.assign(properties, inner.properties);
        additional ??= inner.additional;
        items ??= inner.items;
      }
    return { properties, additional, items };
  }

  private rename(
    schema: Schema | undefined,
    value: unknown,
    direction: 'toUpstream' | 'toFacade',
    path = '',
    /** Checking a facade body: where a field the schema does not take is reported (it is left out). */
    refused?: FieldProblem[],
  ): unknown {
    if (typeof value === 'string' && direction === 'toFacade' && this.isTimestamp(schema))
      return toRfc3339Utc(value);
    if (value === null || typeof value !== 'object') return value;
    const plan = this.planOf(schema);
    if (Array.isArray(value))
      return value.map((item, index) =>
        this.rename(plan.items, item, direction, `${path}[${index}]`, refused),
      );
    const byName = plan[direction];
    const out: Record<string, unknown> = {};
    for (const key in value as Record<string, unknown>) {
      const inner = (value as Record<string, unknown>)[key];
      const declared = byName.get(key);
      const group = direction === 'toUpstream' ? plan.groups.get(key) : undefined;
      const at = refused ? (path ? `${path}.${key}` : key) : '';
      if (declared && direction === 'toFacade') this.put(out, declared, inner, at, refused);
      else if (declared) out[declared[0]] = this.upstreamValue(declared[1], inner, at, refused);
      else if (group) this.ungroup(out, group, inner, at, refused);
      // A key of a free-form map (metadata) is the app's own: it passes unchanged.
      else if (plan.additional)
        out[key] = this.rename(plan.additional, inner, direction, at, refused);
      // Checking a facade body: an undeclared key (a snake_case name included) is refused by name.
      else if (refused && byName.size > 0) refused.push({ path: at, message: 'is not allowed' });
      else out[key] = inner;
    }
    return out;
  }

  /** An upstream field as the facade gives it: renamed, nested under a dotted name, or lifted. */
  private put(
    out: Record<string, unknown>,
    [name, schema]: [string, Schema],
    value: unknown,
    at: string,
    refused?: FieldProblem[],
  ): void {
    const renamed = this.rename(schema, value, 'toFacade', at, refused);
    if (schema[FLATTENED] && renamed && typeof renamed === 'object') Object.assign(out, renamed);
    else if (name.includes('.')) {
      const [group, field] = name.split('.');
      const nested = (out[group] ??= {}) as Record<string, unknown>;
      nested[field] = renamed;
    } else out[name] = renamed;
  }

  /** A facade value as the upstream field takes it: a joined text list from an array. */
  private upstreamValue(schema: Schema, value: unknown, at: string, refused?: FieldProblem[]) {
    const joined = this.joinedOf(schema);
    if (joined === undefined) return this.rename(schema, value, 'toUpstream', at, refused);
    if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
      return value.join(joined);
    refused?.push({ path: at, message: 'must be an array of strings' });
    return undefined;
  }

  /** A facade object (`business`) as the flat upstream fields it holds (`business_name`, …). */
  private ungroup(
    out: Record<string, unknown>,
    group: Map<string, [string, Schema]>,
    value: unknown,
    at: string,
    refused?: FieldProblem[],
  ): void {
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      refused?.push({ path: at, message: 'must be an object' });
      return;
    }
    for (const [field, inner] of Object.entries(value)) {
      const declared = group.get(field);
      if (declared)
        out[declared[0]] = this.upstreamValue(declared[1], inner, `${at}.${field}`, refused);
      else refused?.push({ path: `${at}.${field}`, message: 'is not allowed' });
    }
  }

  /**
   * How values of a schema are renamed, worked out once per schema (the contract never changes): its
   * declared properties by the name each side gives them, its free-form map and its items.
   */
  private planOf(schema: Schema | undefined): RenamePlan {
    if (!schema) return NO_PLAN;
    let plan = this.plans.get(schema);
    if (!plan) {
      const { properties, additional, items } = this.propertiesOf(schema);
      plan = { toUpstream: new Map(), toFacade: new Map(), groups: new Map(), additional, items };
      for (const [snake, inner] of Object.entries(properties)) {
        const name = facadeNameOf(snake, inner);
        plan.toFacade.set(snake, [name, inner]);
        const [group, field] = name.split('.');
        if (field === undefined) plan.toUpstream.set(name, [snake, inner]);
        else {
          if (!plan.groups.has(group)) plan.groups.set(group, new Map());
          plan.groups.get(group)!.set(field, [snake, inner]);
        }
      }
      this.plans.set(schema, plan);
    }
    return plan;
  }
}
