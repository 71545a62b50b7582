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
import { MarketplaceSellersService } from './marketplace-sellers.service.js';

export const SELLER_EXAMPLE = {
  email: 'orders@olive-shop.example',
  contactPhone: '+306900000000',
  description: 'Olive oil and honey',
  business: {
    name: 'Olive Shop',
    title: 'Olive Shop S.A.',
    taxNumber: 'EL123456789',
    address: 'Ermou 12, Athens',
  },
  bankAccount: { iban: 'GR1601101250000000012300695', beneficiaryName: 'Olive Shop S.A.' },
  payoutInterval: 'weekly',
  payoutFrequency: ['monday', 'thursday'],
};

@ApiTags('Marketplace')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/marketplace/sellers')
export class MarketplaceSellersController {
  constructor(private readonly sellers: MarketplaceSellersService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Onboard a seller',
    description:
      "Creates a seller of the tenant's marketplace with its business and bank account (payouts go there). Defaults: daily payouts, threshold 0, payouts not on hold, `isC2c` null. With an Idempotency-Key it never runs twice.",
    body: ['CreateSellerForm', SELLER_EXAMPLE],
    answer: [201, 'Seller', 'The seller, `Authorized`'],
  })
  async createMarketplaceSeller(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateSellerForm')) form: CardForm<'CreateSellerForm'>,
  ) {
    return facade('Seller', await this.sellers.create(principal.tenantId, form));
  }

  @Get()
  @CardRoute({
    summary: 'List sellers',
    description: 'Most recent first; `taxNumber` and `payoutsOnHold` filter.',
    query: 'listSellers',
    answer: [200, 'SellerList', 'A page of sellers'],
  })
  async listMarketplaceSellers(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listSellers')) query: CardQueryOf<'listSellers'>,
  ) {
    return facade('SellerList', await this.sellers.list(principal.tenantId, query));
  }

  @Get(':sellerId')
  @CardRoute({
    summary: 'Get a seller',
    description: "By the provider's id (`sel_…`) or Portico's.",
    id: ['sellerId', 'seller'],
    answer: [200, 'Seller', 'The seller'],
    problems: { 404: 'No such seller for this tenant' },
  })
  async getMarketplaceSeller(
    @CurrentPrincipal() principal: Principal,
    @Param('sellerId', CardId) sellerId: string,
  ) {
    return facade('Seller', await this.sellers.get(principal.tenantId, sellerId));
  }

  @Put(':sellerId')
  @CardRoute({
    summary: 'Update a seller',
    description:
      'In the shape a seller is answered in (`business`, `payoutFrequency` an array); `bankAccount.iban` and `bankAccount.beneficiaryName` go together; a new IBAN is listed at once but used for payouts only once the provider has verified it.',
    id: ['sellerId', 'seller'],
    body: ['UpdateSellerForm', { payoutThresholdAmount: 5000 }],
    answer: [200, 'Seller', 'The seller'],
    problems: { 404: 'No such seller for this tenant' },
  })
  async updateMarketplaceSeller(
    @CurrentPrincipal() principal: Principal,
    @Param('sellerId', CardId) sellerId: string,
    @Body(CardBody('UpdateSellerForm')) form: CardForm<'UpdateSellerForm'>,
  ) {
    return facade('Seller', await this.sellers.update(principal.tenantId, sellerId, form));
  }

  @Get(':sellerId/balance')
  @CardRoute({
    summary: "Get a seller's balance",
    description:
      'What the next payout would pay: transfers not paid out and not on hold, less reversals.',
    id: ['sellerId', 'seller'],
    answer: [200, 'SellerBalance', "The seller's balance"],
    problems: { 404: 'No such seller for this tenant' },
  })
  async getMarketplaceSellerBalance(
    @CurrentPrincipal() principal: Principal,
    @Param('sellerId', CardId) sellerId: string,
  ) {
    return facade('SellerBalance', await this.sellers.balance(principal.tenantId, sellerId));
  }

  @Post(':sellerId/transfers')
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Transfer funds directly to or from a seller',
    description:
      "`credit` moves `amount` from the marketplace's available balance to the seller, `debit` from the seller's available balance to the marketplace. With an Idempotency-Key it never runs twice.",
    id: ['sellerId', 'seller'],
    body: ['CreateSellerTransferForm', { type: 'credit', amount: 500, description: 'Bonus' }],
    answer: [201, 'Transfer', 'The transfer'],
    problems: { 404: 'No such seller for this tenant' },
  })
  async createMarketplaceDirectTransfer(
    @CurrentPrincipal() principal: Principal,
    @Param('sellerId', CardId) sellerId: string,
    @Body(CardBody('CreateSellerTransferForm')) form: CardForm<'CreateSellerTransferForm'>,
  ) {
    return facade('Transfer', await this.sellers.transfer(principal.tenantId, sellerId, form));
  }
}
