import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import {
  ApiCardProblems,
  CardId,
  CardQuery,
  type CardQueryOf,
  facade,
  CardRoute,
} from '../common/card-api.js';
import { MarketplacePayoutsService } from './marketplace-payouts.service.js';

@ApiTags('Marketplace')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/marketplace')
export class MarketplacePayoutsController {
  constructor(private readonly payouts: MarketplacePayoutsService) {}

  @Get('payouts')
  @CardRoute({
    summary: 'List payouts',
    description:
      "Payouts the provider's scheduler made to the sellers, most recent first; `seller` and `isDeposited` filter. Each one listed is kept in Portico's store with its Pending -> Deposited history.",
    query: 'listPayouts',
    answer: [200, 'PayoutList', 'A page of payouts'],
  })
  async listMarketplacePayouts(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listPayouts')) query: CardQueryOf<'listPayouts'>,
  ) {
    return facade('PayoutList', await this.payouts.list(principal.tenantId, query));
  }

  @Get('payouts/:payoutId')
  @CardRoute({
    summary: 'Get a payout',
    description: "By the provider's id (`pay_…`).",
    id: ['payoutId', 'payout'],
    answer: [200, 'Payout', 'The payout'],
    problems: { 404: 'No such payout for this tenant' },
  })
  async getMarketplacePayout(
    @CurrentPrincipal() principal: Principal,
    @Param('payoutId', CardId) payoutId: string,
  ) {
    return facade('Payout', await this.payouts.get(principal.tenantId, payoutId));
  }

  @Get('balance')
  @CardRoute({
    summary: "Get the marketplace's balance",
    description:
      '`availableAmount`: commissions and direct debits, less credits; `currentAmount`: captured split payments not yet transferred or refunded.',
    answer: [200, 'MarketplaceBalance', "The marketplace's balance"],
  })
  async getMarketplaceBalance(@CurrentPrincipal() principal: Principal) {
    return facade('MarketplaceBalance', await this.payouts.balance(principal.tenantId));
  }
}
