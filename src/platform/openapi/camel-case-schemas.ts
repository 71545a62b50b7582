import { ApiProperty } from '@nestjs/swagger';
import type {
  FieldProblem,
  OpenApiContract,
  Schema,
} from '#src/shared/contracts/openapi-contract.js';
import { RFC3339_UTC_SCHEMA, toRfc3339Utc } from '../common/rfc3339.js';
import { UpstreamSchemas } from './upstream-schema.decorator.js';

/**
 * Marks a provider's timestamp in an upstream spec: `true` on an answer's (the facade gives it as RFC 3339
 * in UTC), `request` on one an app sends (documented as `format: date-time`, passed on as it is).
 */
const TIMESTAMP = 'x-portico-timestamp';

/**
 * The facade's name of a declared property: its camelCase, or the name an upstream spec gives it with
 * `x-portico-facade-name` (a provider's embedded `{count, data}` list is `{totalCount, items}`).
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
  additional?: Schema;
  items?: Schema;
}

const NO_PLAN: RenamePlan = { toUpstream: new Map(), toFacade: new Map() };

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
    const unknown: string[] = [];
    const value = this.rename(this.contract.schemas[name], body, 'toUpstream', '', unknown);
    const problems = [
      ...unknown.map((path) => ({ path, message: 'is not allowed' })),
      ...this.contract
        .validate({ $ref: `#/components/schemas/${name}` }, value, '')
        .map((problem) => ({
          path: problem.path
            .replace(/^\./, '')
            .split('.')
            .map((part) => camelCase(part))
            .join('.'),
          // The contract's messages quote its own (snake_case) names; the app sent the facade's.
          message: problem.message.replace(
            /'([a-z][a-z0-9]*(?:_[a-z0-9]+)+)'/g,
            (_quoted, name: string) => `'${camelCase(name)}'`,
          ),
        })),
    ];
    return { value, problems };
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
      if (key === 'properties' && value && typeof value === 'object')
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, Schema>).map(([property, inner]) => [
            facadeNameOf(property, inner),
            this.camelSchema(inner),
          ]),
        );
      else if (key === 'required' && Array.isArray(value))
        out.required = (value as string[]).map((name) =>
          facadeNameOf(name, (schema.properties as Record<string, Schema> | undefined)?.[name]),
        );
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
    /** Where a facade key the schema does not declare is reported (it is left out of the value). */
    unknown?: string[],
  ): unknown {
    if (typeof value === 'string' && direction === 'toFacade' && this.isTimestamp(schema))
      return toRfc3339Utc(value);
    if (value === null || typeof value !== 'object') return value;
    const plan = this.planOf(schema);
    if (Array.isArray(value))
      return value.map((item, index) =>
        this.rename(plan.items, item, direction, `${path}[${index}]`, unknown),
      );
    const byName = plan[direction];
    const out: Record<string, unknown> = {};
    for (const key in value as Record<string, unknown>) {
      const inner = (value as Record<string, unknown>)[key];
      const declared = byName.get(key);
      const at = unknown ? (path ? `${path}.${key}` : key) : '';
      if (declared) out[declared[0]] = this.rename(declared[1], inner, direction, at, unknown);
      // A key of a free-form map (metadata) is the app's own: it passes unchanged.
      else if (plan.additional)
        out[key] = this.rename(plan.additional, inner, direction, at, unknown);
      // Checking a facade body: an undeclared key (a snake_case name included) is refused by name.
      else if (unknown && byName.size > 0) unknown.push(at);
      else out[key] = inner;
    }
    return out;
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
      plan = { toUpstream: new Map(), toFacade: new Map(), additional, items };
      for (const [snake, inner] of Object.entries(properties)) {
        plan.toUpstream.set(facadeNameOf(snake, inner), [snake, inner]);
        plan.toFacade.set(snake, [facadeNameOf(snake, inner), inner]);
      }
      this.plans.set(schema, plan);
    }
    return plan;
  }
}
