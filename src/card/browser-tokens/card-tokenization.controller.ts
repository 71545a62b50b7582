import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { CardTokenizationConfig } from './card-tokenization.dto.js';
import { CardTokenizationService } from './card-tokenization.service.js';

@ApiTags('Card tokens')
@ApiStandardProblems()
@Auth('app')
@Controller('v1/card/tokenization-config')
export class CardTokenizationController {
  constructor(private readonly tokenization: CardTokenizationService) {}

  @Get()
  @ApiOperation({
    summary: 'Get what a browser needs to make card tokens',
    description:
      "The tenant's public key, the provider's token endpoint and Portico's embeddable tokenisation page: the payer's browser sends the card to the provider and hands the app a `ctn_` token, so card numbers never reach the app's server nor Portico. The secret key is never shown.",
  })
  @ApiOkResponse({ type: CardTokenizationConfig })
  @ApiProblems({
    409: 'The tenant has no public key at the card provider yet (an operator sets it)',
    503: 'The card API is not configured',
  })
  getCardTokenizationConfig(
    @CurrentPrincipal() principal: Principal,
  ): Promise<CardTokenizationConfig> {
    return this.tokenization.configOf(principal.tenantId);
  }
}
