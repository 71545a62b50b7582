import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { ApiCardProblems } from '../common/card-api.js';
import { WalletTokenizationView } from './card-wallets.dto.js';
import { CardWalletsService } from './card-wallets.service.js';
import {
  ApiWalletTokenizationBody,
  WalletTokenizationBodyPipe,
  type WalletTokenizationRequest,
} from './wallet-body.pipe.js';

@ApiTags('Card wallets')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/wallets/tokenizations')
export class CardWalletsController {
  constructor(private readonly wallets: CardWalletsService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    summary: 'Tokenise web-wallet payment data',
    description:
      "Sends the wallet token the checkout got from the wallet provider to the provider (with the tenant's public key and Portico's own callback address). Cryptogram flow: Portico verifies the provider's signed card token and answers it `verified` with `cardToken`. PAN-only flow: the answer is `pending` with the provider's `form` for the payer; once the payer completes it, the signed card token comes back through Portico, which verifies it and sends the browser to `returnUrl`. Charge a verified `cardToken` once with `POST /v1/card/payments` (`token`, the same `amount`); Portico refuses any other card token of a tokenisation without calling the provider. The provider's constraint: a PAN-only token needs `payerEmail` or `payerPhone` (400 validation-failed naming both, before the call when the token shows its method, else from the provider's refusal).",
  })
  @ApiWalletTokenizationBody()
  @ApiResponse({
    status: 201,
    type: WalletTokenizationView,
    description: 'The tokenisation, `verified` (cryptogram) or `pending` (PAN-only)',
  })
  async createWalletTokenization(
    @CurrentPrincipal() principal: Principal,
    @Body(new WalletTokenizationBodyPipe()) request: WalletTokenizationRequest,
  ): Promise<WalletTokenizationView> {
    return this.wallets.tokenize(principal.tenantId, request);
  }

  @Get(':tokenizationId')
  @ApiOperation({
    summary: 'Get a web-wallet tokenisation',
    description: 'Its status, its verified card token and, once charged, the payment.',
  })
  @ApiParam({
    name: 'tokenizationId',
    description: "Portico's id of the tokenisation",
    schema: { type: 'string', format: 'uuid', maxLength: 36 },
  })
  @ApiResponse({ status: 200, type: WalletTokenizationView, description: 'The tokenisation' })
  @ApiProblems({ 404: 'No such tokenisation for this tenant' })
  async getWalletTokenization(
    @CurrentPrincipal() principal: Principal,
    @Param('tokenizationId', new ParseUUIDPipe({ version: '4' })) tokenizationId: string,
  ): Promise<WalletTokenizationView> {
    return this.wallets.get(principal.tenantId, tokenizationId);
  }
}
