import { ValidationPipe, type ValidationError } from '@nestjs/common';
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

/** Class-validator on every body, query and path DTO; unknown fields are refused by name. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    exceptionFactory: (errors) => new ValidationFailedException(flatten(errors)),
  });
}
