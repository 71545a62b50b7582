import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, Matches } from 'class-validator';
import { IsOmittable } from '#src/platform/common/omittable.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The window an account's transactions link reads when the app gives no dates: 90 days up to today. */
export const DEFAULT_TRANSACTIONS_DAYS = 90;

export class TransactionsQuery {
  @ApiPropertyOptional({
    description: `First day, inclusive (ISO date); default ${DEFAULT_TRANSACTIONS_DAYS} days before dateTo`,
    format: 'date',
    maxLength: 10,
    example: '2026-10-01',
  })
  @IsOmittable()
  @Matches(DATE, { message: 'dateFrom must be a date, YYYY-MM-DD' })
  @IsISO8601({ strict: true }, { message: 'dateFrom must be a real date' })
  dateFrom?: string;

  @ApiPropertyOptional({
    description: 'Last day, inclusive (ISO date); default today (UTC)',
    format: 'date',
    maxLength: 10,
    example: '2026-11-20',
  })
  @IsOmittable()
  @Matches(DATE, { message: 'dateTo must be a date, YYYY-MM-DD' })
  @IsISO8601({ strict: true }, { message: 'dateTo must be a real date' })
  dateTo?: string;
}

/** The period asked for, the missing ends filled: the bank needs both, links carry neither. */
export function transactionsPeriod(
  query: TransactionsQuery,
  today = new Date(),
): { dateFrom: string; dateTo: string } {
  const dateTo = query.dateTo ?? today.toISOString().slice(0, 10);
  const from = new Date(`${dateTo}T00:00:00Z`);
  from.setUTCDate(from.getUTCDate() - DEFAULT_TRANSACTIONS_DAYS);
  return { dateFrom: query.dateFrom ?? from.toISOString().slice(0, 10), dateTo };
}
