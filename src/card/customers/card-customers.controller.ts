import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
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
  @CardRoute({
    summary: 'Create a customer',
    description:
      'A customer with one card (its default), from card fields (no cvv needed) or an unused card token.',
    body: [
      'CreateCustomerForm',
      {
        cardNumber: '4556390755719395',
        expirationMonth: '12',
        expirationYear: '2030',
        holderName: 'Ada Lovelace',
        fullName: 'Ada Lovelace',
        email: 'ada@example.com',
      },
    ],
    answer: [201, 'Customer', 'The customer'],
  })
  async createCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateCustomerForm')) form: CardForm<'CreateCustomerForm'>,
  ) {
    return facade('Customer', await this.customers.create(principal.tenantId, form));
  }

  @Get()
  @CardRoute({
    summary: 'List customers',
    description: 'Deleted ones included (`isActive` false).',
    query: 'listCustomers',
    answer: [200, 'CustomerList', 'A page of customers'],
  })
  async listCardCustomers(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listCustomers')) query: CardQueryOf<'listCustomers'>,
  ) {
    return facade('CustomerList', await this.customers.list(principal.tenantId, query));
  }

  @Get(':customerId')
  @CardRoute({
    summary: 'Get a customer',
    description: 'With its cards.',
    id: ['customerId', 'customer'],
    answer: [200, 'Customer', 'The customer'],
    problems: NOT_FOUND,
  })
  async getCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
  ) {
    return facade('Customer', await this.customers.get(principal.tenantId, customerId));
  }

  @Put(':customerId')
  @CardRoute({
    summary: 'Update a customer',
    description:
      'Omitted fields are unchanged; `card` with `defaultCard: 1` makes that card the default.',
    id: ['customerId', 'customer'],
    body: ['UpdateCustomerForm', { email: 'ada.lovelace@example.com' }],
    answer: [200, 'Customer', 'The customer'],
    problems: NOT_FOUND,
  })
  async updateCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Body(CardBody('UpdateCustomerForm')) form: CardForm<'UpdateCustomerForm'>,
  ) {
    return facade('Customer', await this.customers.update(principal.tenantId, customerId, form));
  }

  @Delete(':customerId')
  @CardRoute({
    summary: 'Delete a customer',
    description:
      'The customer becomes inactive (it can no longer pay); the answer is the reduced object.',
    id: ['customerId', 'customer'],
    answer: [200, 'DeletedCustomer', 'The deleted customer'],
    problems: NOT_FOUND,
  })
  async deleteCardCustomer(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
  ) {
    return facade('DeletedCustomer', await this.customers.remove(principal.tenantId, customerId));
  }

  @Post(':customerId/cards')
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Add a card to a customer',
    description:
      'From card fields (no cvv needed) or an unused card token; `defaultCard: 1` makes it the default.',
    id: ['customerId', 'customer'],
    body: [
      'CreateCustomerCardForm',
      {
        cardNumber: '5217925525906273',
        expirationMonth: '11',
        expirationYear: '2031',
        holderName: 'Ada Lovelace',
        defaultCard: 1,
      },
    ],
    answer: [201, 'Card', 'The card, masked'],
    problems: NOT_FOUND,
  })
  async addCardCustomerCard(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Body(CardBody('CreateCustomerCardForm')) form: CardForm<'CreateCustomerCardForm'>,
  ) {
    return facade('Card', await this.customers.addCard(principal.tenantId, customerId, form));
  }

  @Get(':customerId/cards')
  @CardRoute({
    summary: "List a customer's cards",
    description: 'Masked cards.',
    id: ['customerId', 'customer'],
    query: 'listCustomerCards',
    answer: [200, 'CardList', 'A page of cards'],
    problems: NOT_FOUND,
  })
  async listCardCustomerCards(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Query(CardQuery('listCustomerCards')) query: CardQueryOf<'listCustomerCards'>,
  ) {
    return facade('CardList', await this.customers.cards(principal.tenantId, customerId, query));
  }

  @Get(':customerId/cards/:cardId')
  @CardRoute({
    summary: "Get a customer's card",
    description: 'Masked.',
    id: [
      ['customerId', 'customer'],
      ['cardId', 'card'],
    ],
    answer: [200, 'Card', 'The card, masked'],
    problems: NOT_FOUND,
  })
  async getCardCustomerCard(
    @CurrentPrincipal() principal: Principal,
    @Param('customerId', CardId) customerId: string,
    @Param('cardId', CardId) cardId: string,
  ) {
    return facade('Card', await this.customers.card(principal.tenantId, customerId, cardId));
  }

  @Delete(':customerId/cards/:cardId')
  @CardRoute({
    summary: "Delete a customer's card",
    description:
      'Deleting the default card makes the most recently added card the default; the last card cannot be deleted.',
    id: [
      ['customerId', 'customer'],
      ['cardId', 'card'],
    ],
    answer: [200, 'DeletedCard', 'The deleted card'],
    problems: NOT_FOUND,
  })
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
  @CardRoute({
    summary: "List a customer's mandates",
    description:
      'Mandates are made by a payment with `mandateReference` (see Create a card payment).',
    id: ['customerId', 'customer'],
    query: 'listCustomerMandates',
    answer: [200, 'MandateList', 'A page of mandates'],
    problems: NOT_FOUND,
  })
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
  @CardRoute({
    summary: 'Revoke a mandate',
    description: 'The mandate becomes `revoked`.',
    id: [
      ['customerId', 'customer'],
      ['mandateId', 'mandate'],
    ],
    answer: [200, 'Mandate', 'The mandate, revoked'],
    problems: NOT_FOUND,
  })
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
