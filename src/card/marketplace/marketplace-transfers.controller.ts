import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
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
import { MarketplaceTransfersService } from './marketplace-transfers.service.js';

@ApiTags('Marketplace')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/marketplace')
export class MarketplaceTransfersController {
  constructor(private readonly transfers: MarketplaceTransfersService) {}

  @Post('payments/:paymentId/transfers')
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Split a payment to a seller',
    description:
      "Transfers `amount` of a captured split payment (`split: 1`) to `seller`, the marketplace keeping `commissionAmount`. `onHold: 1` holds its payout until released. Refusals carry the provider's code (`upstream.code`, e.g. 60010 not captured, 60015 above the remaining amount). With an Idempotency-Key it never runs twice.",
    id: ['paymentId', 'payment'],
    body: [
      'CreatePaymentTransferForm',
      {
        seller: 'sel_xxxxxxxxxxxxxxxx',
        amount: 900,
        commissionAmount: 90,
        description: 'Order 1042, olive oil',
      },
    ],
    answer: [201, 'Transfer', 'The transfer'],
    problems: { 404: 'No such payment or seller for this tenant' },
  })
  async createMarketplacePaymentTransfer(
    @CurrentPrincipal() principal: Principal,
    @Param('paymentId', CardId) paymentId: string,
    @Body(CardBody('CreatePaymentTransferForm')) form: CardForm<'CreatePaymentTransferForm'>,
  ) {
    return facade('Transfer', await this.transfers.split(principal.tenantId, paymentId, form));
  }

  @Get('transfers')
  @CardRoute({
    summary: 'List transfers',
    description: 'Most recent first; `payment`, `seller`, `payout` and `paidOut` filter.',
    query: 'listTransfers',
    answer: [200, 'TransferList', 'A page of transfers'],
  })
  async listMarketplaceTransfers(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listTransfers')) query: CardQueryOf<'listTransfers'>,
  ) {
    return facade('TransferList', await this.transfers.list(principal.tenantId, query));
  }

  @Get('transfers/:transferId')
  @CardRoute({
    summary: 'Get a transfer',
    description: "By the provider's id (`tra_…`) or Portico's.",
    id: ['transferId', 'transfer'],
    answer: [200, 'Transfer', 'The transfer with its reversals'],
    problems: { 404: 'No such transfer for this tenant' },
  })
  async getMarketplaceTransfer(
    @CurrentPrincipal() principal: Principal,
    @Param('transferId', CardId) transferId: string,
  ) {
    return facade('Transfer', await this.transfers.get(principal.tenantId, transferId));
  }

  @Put('transfers/:transferId')
  @CardRoute({
    summary: 'Update a transfer',
    description:
      '`onHold: 1` holds the payout of a payment transfer not paid out yet, `0` releases it; direct transfers are never held.',
    id: ['transferId', 'transfer'],
    body: ['UpdateTransferForm', { onHold: 0 }],
    answer: [200, 'Transfer', 'The transfer'],
    problems: { 404: 'No such transfer for this tenant' },
  })
  async updateMarketplaceTransfer(
    @CurrentPrincipal() principal: Principal,
    @Param('transferId', CardId) transferId: string,
    @Body(CardBody('UpdateTransferForm')) form: CardForm<'UpdateTransferForm'>,
  ) {
    return facade('Transfer', await this.transfers.update(principal.tenantId, transferId, form));
  }

  @Post('reversals')
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Reverse a transfer',
    description:
      'Reverses `amount` of `transfer` (all that remains when omitted, commission included); the commission comes back in proportion unless `refundCommission: 0` or an explicit `commissionAmount`. With an Idempotency-Key it never runs twice.',
    body: ['CreateReversalForm', { transfer: 'tra_xxxxxxxxxxxxxxxx', amount: 300 }],
    answer: [201, 'Reversal', 'The reversal'],
    problems: { 404: 'No such transfer for this tenant' },
  })
  async createMarketplaceReversal(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateReversalForm')) form: CardForm<'CreateReversalForm'>,
  ) {
    return facade('Reversal', await this.transfers.reverse(principal.tenantId, form));
  }

  @Get('reversals')
  @CardRoute({
    summary: 'List reversals',
    description: 'Most recent first; `transfer`, `payout` and `paidOut` filter.',
    query: 'listReversals',
    answer: [200, 'ReversalList', 'A page of reversals'],
  })
  async listMarketplaceReversals(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listReversals')) query: CardQueryOf<'listReversals'>,
  ) {
    return facade('ReversalList', await this.transfers.listReversals(principal.tenantId, query));
  }

  @Get('reversals/:reversalId')
  @CardRoute({
    summary: 'Get a reversal',
    description: "By the provider's id (`rev_…`) or Portico's.",
    id: ['reversalId', 'reversal'],
    answer: [200, 'Reversal', 'The reversal'],
    problems: { 404: 'No such reversal for this tenant' },
  })
  async getMarketplaceReversal(
    @CurrentPrincipal() principal: Principal,
    @Param('reversalId', CardId) reversalId: string,
  ) {
    return facade('Reversal', await this.transfers.getReversal(principal.tenantId, reversalId));
  }
}
