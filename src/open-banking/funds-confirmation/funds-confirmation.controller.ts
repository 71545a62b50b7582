import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '#src/access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import { PSD2 } from '#src/upstreams/open-banking/psd2-schemas.js';
import { ConsentAccess, Granted } from '../consent-access/consent-access.decorator.js';
import type { ConsentAccessGrant } from '../consent-access/consent-access.service.js';
import { FundsConfirmationRequest } from './funds-confirmation.dto.js';
import { FundsConfirmationService } from './funds-confirmation.service.js';

@ApiTags('Confirmation of funds')
@ApiStandardProblems()
@ApiProblems({
  ...UPSTREAM_PROBLEMS,
  401: 'The consent is not a valid confirmation-of-funds consent (CONSENT_INVALID, CONSENT_EXPIRED); type urn:portico:problem:consent:renewal-required when the bank no longer knows it (consentId names it; create a new consent)',
  403: "The account is not the consent's (RESOURCE_UNKNOWN)",
  404: 'No such consent for this tenant (CONSENT_UNKNOWN)',
})
@Auth('app')
@Controller('v1/funds-confirmations')
export class FundsConfirmationController {
  constructor(private readonly funds: FundsConfirmationService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Confirm funds',
    description:
      'Whether the account covers the amount now, under a valid confirmation-of-funds consent.',
  })
  @ConsentAccess({ operation: 'confirmFunds', kind: 'cof' })
  @ApiOkResponse({ schema: PSD2.ref('ConfirmationOfFundsResponse') })
  confirmFunds(@Granted() grant: ConsentAccessGrant, @Body() body: FundsConfirmationRequest) {
    return this.funds.confirmFunds(grant, body);
  }
}
