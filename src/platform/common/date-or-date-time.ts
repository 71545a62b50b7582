import { applyDecorators } from '@nestjs/common';
import { IsISO8601, Matches } from 'class-validator';

/**
 * A date (`2026-11-20`) or a date-time (`2026-11-20T10:00:00Z`) with a four-digit year: IsISO8601 alone takes
 * `2026` or `2026-W47`, which PostgreSQL cannot read as a timestamp (a 500, where the caller deserves a 400).
 */
export const DATE_OR_DATE_TIME =
  /^[1-9]\d{3}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** Validates a query field that filters by time (see DATE_OR_DATE_TIME). */
export const IsDateOrDateTime = (name: string): PropertyDecorator =>
  applyDecorators(
    IsISO8601({ strict: true }, { message: `${name} must be an ISO date or date-time` }),
    Matches(DATE_OR_DATE_TIME, {
      message: `${name} must be a date (2026-11-20) or a date-time (2026-11-20T10:00:00Z)`,
    }),
  );
