import { PageQuery } from '#src/platform/common/page-query.js';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { DATE_OR_DATE_TIME, IsDateOrDateTime } from '#src/platform/common/date-or-date-time.js';

/** The statuses a listed transaction can show (INITIATING and PENDING: not decided by the terminal yet). */
export const POS_LIST_STATUSES = [
  'INITIATING',
  'PENDING',
  'CAPTURED',
  'FAILED',
  'CANCELLED',
  'VOIDED',
] as const;
export type PosListStatus = (typeof POS_LIST_STATUSES)[number];

const TERMINAL = '^trm_[A-Za-z0-9]{1,60}$';

/** `GET /v1/pos/transactions`: filters and paging, as the other paged lists take them. */
export class PosTransactionsQuery extends PageQuery {
  @ApiPropertyOptional({
    description: 'Only transactions on this terminal (`trm_…`)',
    maxLength: 64,
    pattern: TERMINAL,
  })
  @IsOptional()
  @Matches(new RegExp(TERMINAL), { message: 'terminal must be a terminal token (trm_…)' })
  terminal?: string;

  @ApiPropertyOptional({
    enum: POS_LIST_STATUSES,
    description:
      'Only transactions in this status (`INITIATING` and `PENDING` alike select those the terminal has not decided yet)',
  })
  @IsOptional()
  @IsIn(POS_LIST_STATUSES)
  status?: PosListStatus;

  @ApiPropertyOptional({ enum: ['payment', 'void'], description: 'Only payments, or only voids' })
  @IsOptional()
  @IsIn(['payment', 'void'])
  type?: 'payment' | 'void';

  @ApiPropertyOptional({
    description: 'Started at or after (an ISO date or date-time)',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('createdFrom')
  createdFrom?: string;

  @ApiPropertyOptional({
    description: 'Started before (an ISO date or date-time)',
    maxLength: 40,
    pattern: DATE_OR_DATE_TIME.source,
  })
  @IsOptional()
  @IsDateOrDateTime('createdTo')
  createdTo?: string;
}
