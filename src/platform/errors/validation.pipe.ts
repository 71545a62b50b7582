import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import type { MetadataStorage as TransformerRules } from 'class-transformer/types/MetadataStorage.js';
import { getMetadataStorage, type MetadataStorage } from 'class-validator';
import { createRequire } from 'node:module';
import { schemaFieldsOf } from './schema-fields.js';
import type { InvalidField } from './problem.js';
import { ValidationFailedException } from './to-problem.js';

/** A constraint whose message is a JSON list of `{ path, message }` problems below the field (schema validation). */
export const SUBFIELD_PROBLEMS_CONSTRAINT = 'subfieldProblems';

function flatten(errors: ValidationError[], parent = ''): InvalidField[] {
  return errors.flatMap((error) => {
    const field = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
    const own = Object.entries(error.constraints ?? {}).flatMap(([name, reason]) => {
      // Fields validated against a schema report each sub-field on its own.
      if (name !== SUBFIELD_PROBLEMS_CONSTRAINT) return [{ field, reason }];
      const problems = JSON.parse(reason) as { path: string; message: string }[];
      return problems.map((problem) => ({
        field: `${field}${problem.path}`,
        reason: problem.message,
      }));
    });
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** One entry per field, its reasons joined: a field that breaks two rules is still one invalid field. */
function byField(errors: InvalidField[]): InvalidField[] {
  const merged = new Map<string, string[]>();
  for (const { field, reason } of errors) {
    const reasons = merged.get(field) ?? [];
    if (!reasons.includes(reason)) reasons.push(reason);
    merged.set(field, reasons);
  }
  return [...merged].map(([field, reasons]) => ({ field, reason: reasons.join('; ') }));
}

const WHERE: Record<ArgumentMetadata['type'], string> = {
  body: 'request body',
  query: 'request query',
  param: 'request path',
  custom: 'request',
};

/** class-transformer's rules (the package exports no name for them; the one copy Nest loads too). */
const { defaultMetadataStorage } = createRequire(import.meta.url)(
  'class-transformer/cjs/storage.js',
) as { defaultMetadataStorage: TransformerRules };

/** Path parameters checked straight against the contract's schemas (see schemaParamsCheck). */
type ParamsCheck = (value: Record<string, unknown>) => unknown;

/**
 * The short way for path parameters whose every rule is a contract-schema field (`PSD2.field`): the
 * same checks, in the same words, as class-validator would make through that field's rule (the
 * schema's problems below the field, an unknown parameter refused), without class-transformer and
 * class-validator's machinery, which on the hot read path cost more than the rest of the validation.
 * Undefined for any other class (other rules, class-transformer decorators): the pipe's usual way.
 */
function schemaParamsCheck(metatype: (new () => object) | undefined): ParamsCheck | undefined {
  if (!metatype) return undefined;
  const fields = schemaFieldsOf(metatype);
  if (fields.size === 0) return undefined;
  const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false);
  const transformed = [...fields.keys()].some(
    (name) =>
      defaultMetadataStorage.findTypeMetadata(metatype, name) !== undefined ||
      defaultMetadataStorage.findTransformMetadatas(metatype, name, 1).length > 0,
  );
  const onlyFields =
    rules.length === fields.size &&
    rules.every(
      (rule) => rule.name === SUBFIELD_PROBLEMS_CONSTRAINT && fields.has(rule.propertyName),
    );
  if (!onlyFields || transformed || defaultMetadataStorage.getExposedMetadatas(metatype).length)
    return undefined;
  // In class-validator's order: the class's own fields, then its ancestors'.
  const ordered = [...new Set(rules.map((rule) => rule.propertyName))].map(
    (name) => [name, fields.get(name)!] as const,
  );
  return (value) => {
    const invalid: InvalidField[] = [];
    for (const name of Object.keys(value))
      if (!fields.has(name))
        invalid.push({ field: name, reason: `property ${name} should not exist` });
    for (const [name, check] of ordered)
      for (const problem of check(value[name]))
        invalid.push({ field: `${name}${problem.path}`, reason: problem.message });
    if (invalid.length > 0) throw new ValidationFailedException(byField(invalid), WHERE.param);
    return Object.assign(new metatype(), value);
  };
}

/** Names where the invalid fields are (body, query or path), which only transform() knows. */
class ProblemValidationPipe extends ValidationPipe {
  private readonly paramsChecks = new Map<unknown, ParamsCheck | undefined>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'param' && value !== null && typeof value === 'object') {
      const { metatype } = metadata;
      let check = this.paramsChecks.get(metatype);
      if (!this.paramsChecks.has(metatype)) {
        check = schemaParamsCheck(metatype as (new () => object) | undefined);
        this.paramsChecks.set(metatype, check);
      }
      if (check) return check(value as Record<string, unknown>);
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof ValidationFailedException && metadata.type !== 'body')
        throw new ValidationFailedException(error.init.errors ?? [], WHERE[metadata.type]);
      throw error;
    }
  }
}

type Rule = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/**
 * class-validator's rule lookup as its validator calls it: without a schema (`undefined`, which its
 * declared type leaves out; an empty name finds the same rules, since no rule's target is one).
 */
type RuleLookup = (
  target: Parameters<MetadataStorage['getTargetValidationMetadatas']>[0],
  schema: string | undefined,
  always: boolean,
  strictGroups: boolean,
  groups?: string[],
) => Rule[];

/**
 * class-validator looks a class's rules up anew on every validation, scanning every class that has
 * rules for its ancestors; the rules only change while classes are declared, so each lookup is kept
 * until a rule is added (validation groups, which Portico does not use, are looked up every time).
 */
function rememberRuleLookups(): void {
  const storage = getMetadataStorage();
  if ('remembered' in storage.getTargetValidationMetadatas) return;
  const original = storage.getTargetValidationMetadatas.bind(storage);
  const lookUp: RuleLookup = (target, schema, always, strictGroups, groups) =>
    original(target, schema ?? '', always, strictGroups, groups);
  const add = storage.addValidationMetadata.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const remembered = new Map<object, Map<string, Rule[]>>();
  // The same lists grouped by property (each validation groups them again): kept with the list.
  const grouped = new WeakMap<Rule[], Record<string, Rule[]>>();
  storage.groupByPropertyName = (rules) => grouped.get(rules) ?? group(rules);
  storage.addValidationMetadata = (metadata) => {
    remembered.clear();
    add(metadata);
  };
  const rememberedLookUp: RuleLookup = (target, schema, always, strictGroups, groups) => {
    if (groups?.length) return lookUp(target, schema, always, strictGroups, groups);
    const variant = `${schema ?? ''}|${always}|${strictGroups}`;
    let byVariant = remembered.get(target);
    if (!byVariant) remembered.set(target, (byVariant = new Map()));
    let rules = byVariant.get(variant);
    if (!rules) {
      rules = lookUp(target, schema, always, strictGroups);
      byVariant.set(variant, rules);
      grouped.set(rules, group(rules));
    }
    return rules;
  };
  storage.getTargetValidationMetadatas = Object.assign(rememberedLookUp, {
    remembered: true as const,
  });
}

/** Class-validator on every body, query and path DTO; unknown fields are refused by name. */
export function createValidationPipe(): ValidationPipe {
  rememberRuleLookups();
  return new ProblemValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    exceptionFactory: (errors) => new ValidationFailedException(byField(flatten(errors))),
  });
}
