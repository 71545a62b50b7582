import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
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

/** Class-validator on every body, query and path DTO; unknown fields are refused by name. */
export function createValidationPipe(): ValidationPipe {
  return new ProblemValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    exceptionFactory: (errors) => new ValidationFailedException(byField(flatten(errors))),
  });
}
