import { ApiProperty } from '@nestjs/swagger';
import { IsISO8601, Matches } from 'class-validator';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export class TransactionsQuery {
  @ApiProperty({
    description: 'First day, inclusive (ISO date)',
    format: 'date',
    maxLength: 10,
    example: '2026-10-01',
  })
  @Matches(DATE, { message: 'dateFrom must be a date, YYYY-MM-DD' })
  @IsISO8601({ strict: true }, { message: 'dateFrom must be a real date' })
  dateFrom: string;

  @ApiProperty({
    description: 'Last day, inclusive (ISO date)',
    format: 'date',
    maxLength: 10,
    example: '2026-11-20',
  })
  @Matches(DATE, { message: 'dateTo must be a date, YYYY-MM-DD' })
  @IsISO8601({ strict: true }, { message: 'dateTo must be a real date' })
  dateTo: string;
}
