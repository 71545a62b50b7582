import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { registerDecorator, type ValidationArguments } from 'class-validator';
import { SUBFIELD_PROBLEMS_CONSTRAINT } from '../errors/validation.pipe.js';
import { facadeSchemaName, psd2 } from '../../upstreams/open-banking/psd2.js';

/**
 * A facade field whose shape is the upstream contract's: validated against the psd2.yaml schema (ajv)
 * and documented as that schema, so that neither the rules nor the docs are copied by hand.
 * Problems are reported per sub-field (see the validation pipe).
 */
export function UpstreamSchema(
  pointer: string,
  options: Omit<ApiPropertyOptions, 'type' | 'allOf' | '$ref'> = {},
): PropertyDecorator {
  // `pointer` names a schema of psd2.yaml, or a property inside one: `ConsentRequest/properties/validUntil`.
  const reference = { $ref: `#/components/schemas/${pointer}` };
  // A whole schema is referenced in the facade's spec; a property inside one is copied in (a simple type).
  const documented = pointer.includes('/')
    ? { ...resolvePointer(pointer) }
    : { allOf: [psd2Ref(pointer)] };
  return applyDecorators(
    ApiProperty({ ...options, ...documented } as ApiPropertyOptions),
    (target: object, propertyName: string | symbol) =>
      registerDecorator({
        name: SUBFIELD_PROBLEMS_CONSTRAINT,
        target: target.constructor,
        propertyName: propertyName as string,
        options: {
          message: (args: ValidationArguments) =>
            JSON.stringify(psd2().validate(reference, args.value, '')),
        },
        validator: {
          validate: (value: unknown) => psd2().validate(reference, value, '').length === 0,
        },
      }),
  );
}

const usedSchemas = new Set<string>();

function resolvePointer(pointer: string): Record<string, unknown> {
  const schemas = (psd2().document.components as { schemas: Record<string, unknown> }).schemas;
  const resolved = pointer
    .split('/')
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], schemas) as Record<
    string,
    unknown
  >;
  if (JSON.stringify(resolved).includes('$ref'))
    throw new Error(
      `UpstreamSchema('${pointer}'): a property with references must be a schema of its own`,
    );
  return resolved;
}

/** A reference to a psd2.yaml schema for a facade response that passes the bank's answer on. */
export function psd2Ref(name: string): { $ref: string } {
  usedSchemas.add(name);
  return { $ref: `#/components/schemas/${facadeSchemaName(name)}` };
}

/** The psd2.yaml schemas the facade's DTOs use, with their dependencies, renamed for the facade's spec. */
export function usedPsd2Schemas(): Record<string, unknown> {
  return psd2SchemaClosure([...usedSchemas].sort());
}

function psd2SchemaClosure(names: string[]): Record<string, unknown> {
  const schemas = (psd2().document.components as { schemas: Record<string, unknown> }).schemas;
  const out: Record<string, unknown> = {};
  const visit = (name: string) => {
    const key = facadeSchemaName(name);
    if (out[key]) return;
    const text = JSON.stringify(schemas[name]);
    out[key] = JSON.parse(
      text.replace(
        /"#\/components\/schemas\/([A-Za-z0-9_]+)"/g,
        (_m, ref: string) => `"#/components/schemas/${facadeSchemaName(ref)}"`,
      ),
    );
    for (const [, ref] of text.matchAll(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g)) visit(ref);
  };
  names.forEach(visit);
  return out;
}
