import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { CardBody, type CardForm } from '../common/card-body.pipe.js';
import {
  ApiCardAnswer,
  ApiCardBody,
  ApiCardId,
  ApiCardProblems,
  ApiCardQuery,
  CardId,
  CardQuery,
  type CardQueryOf,
  facade,
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
  @ApiOperation({
    summary: 'Refund a card payment',
    description:
      'Refunds `amount` cents of `payment`, or what remains of it when `amount` is omitted. Partial refunds add up until the payment is `Refunded`. With an Idempotency-Key it never runs twice.',
  })
  @ApiCardBody('CreateRefundForm', { payment: 'pmt_xxxxxxxxxxxxxxxx', amount: 500 })
  @ApiCardAnswer(201, 'Refund', 'The refund')
  @ApiProblems({ 404: 'No such payment for this tenant' })
  async createCardRefund(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateRefundForm')) form: CardForm<'CreateRefundForm'>,
  ) {
    return facade('Refund', await this.refunds.create(principal.tenantId, form));
  }

  @Get()
  @ApiOperation({
    summary: 'List card refunds',
    description: 'Most recent first; `payment` filters by payment.',
  })
  @ApiCardQuery('listRefunds')
  @ApiCardAnswer(200, 'RefundList', 'A page of refunds')
  async listCardRefunds(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listRefunds')) query: CardQueryOf<'listRefunds'>,
  ) {
    return facade('RefundList', await this.refunds.list(principal.tenantId, query));
  }

  @Get(':refundId')
  @ApiOperation({
    summary: 'Get a card refund',
    description: "By the provider's id (`ref_…`) or Portico's.",
  })
  @ApiCardId('refundId', 'refund')
  @ApiCardAnswer(200, 'Refund', 'The refund')
  @ApiProblems({ 404: 'No such refund for this tenant' })
  async getCardRefund(
    @CurrentPrincipal() principal: Principal,
    @Param('refundId', CardId) refundId: string,
  ) {
    return facade('Refund', await this.refunds.get(principal.tenantId, refundId));
  }
}
