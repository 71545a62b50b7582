import { ValidateIf } from 'class-validator';

/**
 * An optional field: left out, it is not validated; sent, even as `null`, it is validated like any other
 * value (class-validator's IsOptional lets `null` through, which then reaches a NOT NULL column as a 500).
 */
export const IsOmittable = (): PropertyDecorator =>
  ValidateIf((_object: object, value: unknown) => value !== undefined);
