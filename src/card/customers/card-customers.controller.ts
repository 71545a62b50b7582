import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
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
import { CardCustomersService } from './card-customers.service.js';

const NOT_FOUND = { 404: 'No such customer for this tenant' };

@ApiTags('Card customers')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/customers')
export class CardCustomersController {
  constructor(private readonly customers: CardCustomersService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    summary: 'Create a customer',
    description:
      'A customer with one card (its default), from card fields (no cvv needed) or an unused card token.',
  })
  @ApiCardBody('CreateCustomerForm', {
    cardNumber: '4556390755719395',
    expirationMonth: '12',
    expirationYear: '2030',
    holderName: 'Ada Lovelace',
    fullName: 'Ada Lovelace',
    email: 'ada@example.com',
  })
  @ApiCardAnswer(201, 'Customer', 'The customer')
  async createCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateCustomerForm')) form: CardForm<'CreateCustomerForm'>,
  ) {
    return facade('Customer', await this.customers.create(principal.tenantId, form));
  }

  @Get()
  @ApiOperation({
    summary: 'List customers',
    description: 'Deleted ones included (`isActive` false).',
  })
  @ApiCardQuery('listCustomers')
  @ApiCardAnswer(200, 'CustomerList', 'A page of customers')
  async listCardCustomers(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listCustomers')) query: CardQueryOf<'listCustomers'>,
  ) {
    return facade('CustomerList', await this.customers.list(principal.tenantId, query));
  }

  @Get(':customerId')
  @ApiOperation({ summary: 'Get a customer', description: 'With its cards.' })
  @ApiCardId('customerId', 'customer')
  @ApiCardAnswer(200, 'Customer', 'The customer')
  @ApiProblems(NOT_FOUND)
  async getCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
  ) {
    return facade('Customer', await this.customers.get(principal.tenantId, customerId));
  }

  @Put(':customerId')
  @ApiOperation({
    summary: 'Update a customer',
    description:
      'Omitted fields are unchanged; `card` with `defaultCard: 1` makes that card the default.',
  })
  @ApiCardId('customerId', 'customer')
  @ApiCardBody('UpdateCustomerForm', { email: 'ada.lovelace@example.com' })
  @ApiCardAnswer(200, 'Customer', 'The customer')
  @ApiProblems(NOT_FOUND)
  async updateCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Body(CardBody('UpdateCustomerForm')) form: CardForm<'UpdateCustomerForm'>,
  ) {
    return facade('Customer', await this.customers.update(principal.tenantId, customerId, form));
  }

  @Delete(':customerId')
  @ApiOperation({
    summary: 'Delete a customer',
    description:
      'The customer becomes inactive (it can no longer pay); the answer is the reduced object.',
  })
  @ApiCardId('customerId', 'customer')
  @ApiCardAnswer(200, 'DeletedCustomer', 'The deleted customer')
  @ApiProblems(NOT_FOUND)
  async deleteCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
  ) {
    return facade('DeletedCustomer', await this.customers.remove(principal.tenantId, customerId));
  }

  @Post(':customerId/cards')
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    summary: 'Add a card to a customer',
    description:
      'From card fields (no cvv needed) or an unused card token; `defaultCard: 1` makes it the default.',
  })
  @ApiCardId('customerId', 'customer')
  @ApiCardBody('CreateCustomerCardForm', {
    cardNumber: '5217925525906273',
    expirationMonth: '11',
    expirationYear: '2031',
    holderName: 'Ada Lovelace',
    defaultCard: 1,
  })
  @ApiCardAnswer(201, 'Card', 'The card, masked')
  @ApiProblems(NOT_FOUND)
  async addCardCustomerCard(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Body(CardBody('CreateCustomerCardForm')) form: CardForm<'CreateCustomerCardForm'>,
  ) {
    return facade('Card', await this.customers.addCard(principal.tenantId, customerId, form));
  }

  @Get(':customerId/cards')
  @ApiOperation({ summary: "List a customer's cards", description: 'Masked cards.' })
  @ApiCardId('customerId', 'customer')
  @ApiCardQuery('listCustomerCards')
  @ApiCardAnswer(200, 'CardList', 'A page of cards')
  @ApiProblems(NOT_FOUND)
  async listCardCustomerCards(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Query(CardQuery('listCustomerCards')) query: CardQueryOf<'listCustomerCards'>,
  ) {
    return facade('CardList', await this.customers.cards(principal.tenantId, customerId, query));
  }

  @Get(':customerId/cards/:cardId')
  @ApiOperation({ summary: "Get a customer's card", description: 'Masked.' })
  @ApiCardId('customerId', 'customer')
  @ApiCardId('cardId', 'card')
  @ApiCardAnswer(200, 'Card', 'The card, masked')
  @ApiProblems(NOT_FOUND)
  async getCardCustomerCard(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Param('cardId', CardId) cardId: string,
  ) {
    return facade('Card', await this.customers.card(principal.tenantId, customerId, cardId));
  }

  @Delete(':customerId/cards/:cardId')
  @ApiOperation({
    summary: "Delete a customer's card",
    description:
      'Deleting the default card makes the most recently added card the default; the last card cannot be deleted.',
  })
  @ApiCardId('customerId', 'customer')
  @ApiCardId('cardId', 'card')
  @ApiCardAnswer(200, 'DeletedCard', 'The deleted card')
  @ApiProblems(NOT_FOUND)
  async deleteCardCustomerCard(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Param('cardId', CardId) cardId: string,
  ) {
    return facade(
      'DeletedCard',
      await this.customers.removeCard(principal.tenantId, customerId, cardId),
    );
  }

  @Get(':customerId/mandates')
  @ApiOperation({
    summary: "List a customer's mandates",
    description:
      'Mandates are made by a payment with `mandateReference` (see Create a card payment).',
  })
  @ApiCardId('customerId', 'customer')
  @ApiCardQuery('listCustomerMandates')
  @ApiCardAnswer(200, 'MandateList', 'A page of mandates')
  @ApiProblems(NOT_FOUND)
  async listCardCustomerMandates(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Query(CardQuery('listCustomerMandates')) query: CardQueryOf<'listCustomerMandates'>,
  ) {
    return facade(
      'MandateList',
      await this.customers.mandates(principal.tenantId, customerId, query),
    );
  }

  @Delete(':customerId/mandates/:mandateId')
  @ApiOperation({ summary: 'Revoke a mandate', description: 'The mandate becomes `revoked`.' })
  @ApiCardId('customerId', 'customer')
  @ApiCardId('mandateId', 'mandate')
  @ApiCardAnswer(200, 'Mandate', 'The mandate, revoked')
  @ApiProblems(NOT_FOUND)
  async revokeCardCustomerMandate(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Param('mandateId', CardId) mandateId: string,
  ) {
    return facade(
      'Mandate',
      await this.customers.revokeMandate(principal.tenantId, customerId, mandateId),
    );
  }
}
