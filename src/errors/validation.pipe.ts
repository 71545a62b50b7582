import { ValidationPipe, type ValidationError } from '@nestjs/common';
import type { InvalidField } from './problem.js';
import { ValidationFailedException } from './to-problem.js';

function flatten(errors: ValidationError[], parent = ''): InvalidField[] {
  return errors.flatMap((error) => {
    const field = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((reason) => ({ field, reason }));
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
