import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { CardBody, type CardForm } from '../common/card-body.pipe.js';
import {
  ApiCardProblems,
  CardId,
  CardQuery,
  type CardQueryOf,
  facade,
  CardRoute,
} from '../common/card-api.js';
import { CardRefundsService } from './card-refunds.service.js';

@ApiTags('Card refunds')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/refunds')
export class CardRefundsController {
  constructor(private readonly refunds: CardRefundsService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Refund a card payment',
    description:
      'Refunds `amount` cents of `payment`, or what remains of it when `amount` is omitted. Partial refunds add up until the payment is `Refunded`. With an Idempotency-Key it never runs twice.',
    body: ['CreateRefundForm', { payment: 'pmt_xxxxxxxxxxxxxxxx', amount: 500 }],
    answer: [201, 'Refund', 'The refund'],
    problems: { 404: 'No such payment for this tenant' },
  })
  async createCardRefund(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateRefundForm')) form: CardForm<'CreateRefundForm'>,
  ) {
    return facade('Refund', await this.refunds.create(principal.tenantId, form));
  }

  @Get()
  @CardRoute({
    summary: 'List card refunds',
    description: 'Most recent first; `payment` filters by payment.',
    query: 'listRefunds',
    answer: [200, 'RefundList', 'A page of refunds'],
  })
  async listCardRefunds(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listRefunds')) query: CardQueryOf<'listRefunds'>,
  ) {
    return facade('RefundList', await this.refunds.list(principal.tenantId, query));
  }

  @Get(':refundId')
  @CardRoute({
    summary: 'Get a card refund',
    description: "By the provider's id (`ref_…`) or Portico's.",
    id: ['refundId', 'refund'],
    answer: [200, 'Refund', 'The refund'],
    problems: { 404: 'No such refund for this tenant' },
  })
  async getCardRefund(
    @CurrentPrincipal() principal: Principal,
    @Param('refundId', CardId) refundId: string,
  ) {
    return facade('Refund', await this.refunds.get(principal.tenantId, refundId));
  }
}
