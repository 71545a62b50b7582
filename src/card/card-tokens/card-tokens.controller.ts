import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { CardBody, type CardForm } from '../common/card-body.pipe.js';
import { ApiCardProblems, CardIdOf, facade, CardRoute } from '../common/card-api.js';
import { CardTokensService } from './card-tokens.service.js';

@ApiTags('Card tokens')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/tokens')
export class CardTokensController {
  constructor(private readonly tokens: CardTokensService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Create a card token',
    description:
      "A single-use token of a card (15 minutes), made with the tenant's public key; `amount` binds it to one amount. Pay with it (`token`) or store it on a customer.",
    body: [
      'CreateCardTokenForm',
      {
        cardNumber: '5217925525906273',
        expirationMonth: '12',
        expirationYear: '2030',
        holderName: 'Ada Lovelace',
        cvv: '123',
      },
    ],
    answer: [201, 'CardToken', 'The token, with the masked card'],
  })
  async createCardToken(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateCardTokenForm')) form: CardForm<'CreateCardTokenForm'>,
  ) {
    return facade('CardToken', await this.tokens.create(principal.tenantId, form));
  }

  @Get(':id')
  @CardRoute({
    summary: 'Get a card token',
    description: 'Whether it was used or has expired.',
    id: ['id', 'card token', 'tokenId'],
    answer: [200, 'CardToken', 'The token'],
    problems: { 404: 'No such card token for this tenant (`upstream.code` 20005)' },
  })
  async getCardToken(
    @CurrentPrincipal() principal: Principal,
    @Param('id', CardIdOf('tokenId')) tokenId: string,
  ) {
    return facade('CardToken', await this.tokens.get(principal.tenantId, tokenId));
  }
}
