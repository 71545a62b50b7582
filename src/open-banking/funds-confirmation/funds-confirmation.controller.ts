import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Auth, CurrentPrincipal } from '../../access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '../../platform/errors/api-problem-responses.js';
import { currentRequestId } from '../../platform/logging/request-context.js';
import type { Principal } from '../../access/tenants/tenants.service.js';
import { OpenBankingClient } from '../../upstreams/open-banking/open-banking.client.js';
import { ConsentGuardService } from '../consent-access/consent-guard.service.js';
import { ConsentHeadersOf, type ConsentHeaders } from '../consent-access/consent-headers.js';
import { psd2Ref, UpstreamSchema } from '../../platform/openapi/upstream-schema.decorator.js';
import { UpstreamCaller } from '../../upstreams/http/upstream-caller.js';
import { UPSTREAM_PROBLEMS } from '../../upstreams/http/upstream-problems.js';

export class FundsConfirmationRequest {
  @UpstreamSchema('AccountReference', {
    description: 'The account of the consent',
    example: { iban: 'HU80118000170000001234567824' },
  })
  account: { iban: string };

  @UpstreamSchema('Amount', {
    description: 'The amount to check, in the account currency',
    example: { currency: 'EUR', amount: '100.00' },
  })
  instructedAmount: Record<string, unknown>;
}

@ApiTags('Confirmation of funds')
@ApiStandardProblems()
@ApiProblems({
  ...UPSTREAM_PROBLEMS,
  401: 'The consent is not a valid confirmation-of-funds consent (CONSENT_INVALID, CONSENT_EXPIRED)',
  403: "The account is not the consent's (RESOURCE_UNKNOWN)",
  404: 'No such consent for this tenant (CONSENT_UNKNOWN)',
})
@Auth('app')
@Controller('v1/funds-confirmations')
export class FundsController {
  constructor(
    private readonly guard: ConsentGuardService,
    private readonly client: OpenBankingClient,
    private readonly upstream: UpstreamCaller,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Confirm funds',
    description:
      'Whether the account covers the amount now, under a valid confirmation-of-funds consent.',
  })
  @ApiHeader({
    name: 'Consent-ID',
    required: true,
    description: "Portico's consentId of a valid confirmation-of-funds consent",
    schema: { type: 'string', format: 'uuid', maxLength: 36 },
  })
  @ApiOkResponse({ schema: psd2Ref('ConfirmationOfFundsResponse') })
  confirmFunds(
    @CurrentPrincipal() principal: Principal,
    @ConsentHeadersOf() headers: ConsentHeaders,
    @Body() body: FundsConfirmationRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return this.guard.run(
      {
        tenantId: principal.tenantId,
        headers,
        operation: 'confirmFunds',
        kind: 'cof',
        iban: body.account.iban,
      },
      reply,
      (consent) =>
        this.upstream.call('confirmFunds', 'POST', () =>
          this.client.api.POST('/{brandId}/bg/v1/funds-confirmations', {
            params: {
              path: { brandId: consent.brandId },
              header: {
                'X-Request-ID': currentRequestId() ?? randomUUID(),
                'Consent-ID': consent.upstreamConsentId as string,
              },
            },
            body: body as never,
          }),
        ),
    );
  }
}
