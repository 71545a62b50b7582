import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
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

/** Names where the invalid fields are (body, query or path), which only transform() knows. */
class ProblemValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof ValidationFailedException && metadata.type !== 'body')
        throw new ValidationFailedException(error.init.errors ?? [], WHERE[metadata.type]);
      throw error;
    }
  }
}

type RuleLookup = (
  target: object,
  schema: string | undefined,
  always: boolean,
  strictGroups: boolean,
  groups?: string[],
) => unknown[];

/**
 * class-validator looks a class's rules up anew on every validation, scanning every class that has
 * rules for its ancestors; the rules only change while classes are declared, so each lookup is kept
 * until a rule is added (validation groups, which Portico does not use, are looked up every time).
 */
function rememberRuleLookups(): void {
  const storage = getMetadataStorage() as unknown as {
    getTargetValidationMetadatas: RuleLookup & { remembered?: true };
    addValidationMetadata: (metadata: unknown) => void;
    groupByPropertyName: (rules: unknown[]) => Record<string, unknown[]>;
  };
  if (storage.getTargetValidationMetadatas.remembered) return;
  const lookUp = storage.getTargetValidationMetadatas.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const remembered = new Map<object, Map<string, unknown[]>>();
  // The same lists grouped by property (each validation groups them again): kept with the list.
  const grouped = new WeakMap<unknown[], Record<string, unknown[]>>();
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
