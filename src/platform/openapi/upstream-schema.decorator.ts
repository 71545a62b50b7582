import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { registerDecorator, type ValidationArguments } from 'class-validator';
import type { OpenApiContract } from '#src/shared/contracts/openapi-contract.js';
import { registerSchemaField } from '../errors/schema-fields.js';
import { SUBFIELD_PROBLEMS_CONSTRAINT } from '../errors/validation.pipe.js';

/** A contract schema without its `x-` annotations (gap-fill notes belong to the upstream spec). */
function withoutExtensions(schema: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !key.startsWith('x-')));
}

type FieldOptions = Omit<ApiPropertyOptions, 'type' | 'allOf' | '$ref'>;

/**
 * The schemas of one upstream contract as the facade uses them: a field decorator that validates and
 * documents with the contract's own schema, references for answers passed on, and the closure of the
 * schemas used, which the spec builder adds to the facade's spec under `prefix` (`Psd2AccountReference`).
 */
export class UpstreamSchemas {
  private readonly used = new Set<string>();

  constructor(
    readonly contract: OpenApiContract,
    readonly prefix: string,
  ) {}

  /** The facade's name for a contract schema. */
  facadeName(name: string): string {
    return `${this.prefix}${name}`;
  }

  /**
   * A facade field whose shape is the upstream contract's: validated against the contract schema
   * (ajv) and documented as that schema, so that neither the rules nor the docs are copied by hand.
   * `pointer` names a schema, or a property inside one: `ConsentRequest/properties/validUntil`.
   * Problems are reported per sub-field (see the validation pipe).
   */
  field(pointer: string, options: FieldOptions = {}): PropertyDecorator {
    const reference = { $ref: `#/components/schemas/${pointer}` };
    // Simple types (a string with a pattern, a property inside a schema) are copied into the facade's
    // spec; structured schemas are referenced.
    const documented = this.isSimple(pointer)
      ? withoutExtensions(this.resolve(pointer))
      : { allOf: [this.ref(pointer)] };
    const problems = (value: unknown) => this.contract.validate(reference, value, '');
    return applyDecorators(
      ApiProperty({ ...documented, ...options } as ApiPropertyOptions),
      (target: object, propertyName: string | symbol) => {
        registerSchemaField(target.constructor, propertyName as string, problems);
        registerDecorator({
          name: SUBFIELD_PROBLEMS_CONSTRAINT,
          target: target.constructor,
          propertyName: propertyName as string,
          options: { message: (args: ValidationArguments) => JSON.stringify(problems(args.value)) },
          validator: { validate: (value: unknown) => problems(value).length === 0 },
        });
      },
    );
  }

  /** A reference to a contract schema, for a facade answer that passes the provider's on. */
  ref(name: string): { $ref: string } {
    this.used.add(name);
    return { $ref: `#/components/schemas/${this.facadeName(name)}` };
  }

  /** A simple (reference-free) schema inside the contract, for facade parameters that repeat it. */
  resolve(pointer: string): Record<string, unknown> {
    const resolved = pointer
      .split('/')
      .reduce<unknown>(
        (node, key) => (node as Record<string, unknown>)[key],
        this.contract.schemas,
      ) as Record<string, unknown> | undefined;
    if (!resolved) throw new Error(`${this.contract.name} has no schema at ${pointer}`);
    if (JSON.stringify(resolved).includes('$ref'))
      throw new Error(`${pointer}: a property with references must be a schema of its own`);
    return resolved;
  }

  /**
   * The schema of a parameter the contract declares (`components/parameters/<name>`), for a facade
   * parameter that reaches the provider as it is: what to document, and the check of a value.
   */
  parameter(name: string): {
    schema: Record<string, unknown>;
    problems: (value: unknown) => { path: string; message: string }[];
  } {
    const declared = (this.contract.document.components as { parameters?: Record<string, unknown> })
      .parameters?.[name] as { schema?: Record<string, unknown> } | undefined;
    if (!declared?.schema) throw new Error(`${this.contract.name} has no parameter ${name}`);
    const ref = declared.schema.$ref as string | undefined;
    const schema = ref
      ? this.resolve(ref.replace('#/components/schemas/', ''))
      : (declared.schema as Record<string, unknown>);
    const pointer = { $ref: `#/components/parameters/${name}/schema` };
    return {
      schema: withoutExtensions(schema),
      problems: (value) => this.contract.validate(pointer, value, ''),
    };
  }

  private isSimple(pointer: string): boolean {
    if (pointer.includes('/')) return true;
    const schema = this.contract.schemas[pointer];
    return schema?.type !== 'object' && !JSON.stringify(schema).includes('$ref');
  }

  /** The contract schemas the facade uses, with their dependencies, renamed for the facade's spec. */
  usedSchemas(): Record<string, unknown> {
    const schemas = this.contract.schemas;
    const refPattern = /"#\/components\/schemas\/([A-Za-z0-9_]+)"/g;
    const out: Record<string, unknown> = {};
    const visit = (name: string) => {
      const key = this.facadeName(name);
      if (out[key]) return;
      const text = JSON.stringify(schemas[name]);
      out[key] = JSON.parse(
        text.replace(
          refPattern,
          (_m, ref: string) => `"#/components/schemas/${this.facadeName(ref)}"`,
        ),
      );
      for (const [, ref] of text.matchAll(refPattern)) visit(ref);
    };
    [...this.used].sort().forEach(visit);
    return out;
  }
}
