import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  ApiBody,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import { ConsentsService } from './consents.service.js';
import { ConsentStatusView, ConsentView, CreateConsentRequest } from './dto/consent.dto.js';
import { ConsentParams } from './dto/params.dto.js';
import { ApiCreatedWithLocation, withLocation } from '../created-location.js';

/** What Swagger UI fills in: a new consent (the default), or the renewal of one. */
const NEW_CONSENT = {
  brandId: 'danube-bank',
  access: {
    accounts: [{ iban: 'HU75118000170000001234567817' }],
    balances: [{ iban: 'HU75118000170000001234567817' }],
    transactions: [{ iban: 'HU75118000170000001234567817' }],
  },
  recurringIndicator: true,
  validUntil: '2027-02-28',
  frequencyPerDay: 4,
  redirectUri: 'https://app.example.com/banking/return',
  nokRedirectUri: 'https://app.example.com/banking/failed',
  psuReference: 'customer-4711',
};

@ApiTags('Account-information consents')
@ApiStandardProblems()
@ApiProblems(UPSTREAM_PROBLEMS)
@Auth('app')
@Controller('v1/consents')
export class ConsentsController {
  constructor(private readonly consents: ConsentsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an account-information consent',
    description:
      "Portico stores the consent, asks the bank for it and returns `_links.scaRedirect`: send the user's browser there. After the bank, the browser comes back through Portico to `redirectUri` with `consentId` and `status` in the query string.",
  })
  @Idempotent()
  @ApiBody({
    type: CreateConsentRequest,
    examples: {
      new: { summary: 'A new consent', value: NEW_CONSENT },
      renewal: {
        summary: 'The renewal of a consent (put its consentId in renewsConsentId)',
        value: { ...NEW_CONSENT, renewsConsentId: '0b6f3a52-7c1e-4d8a-9f2b-5e4c3d2a1b00' },
      },
    },
  })
  @ApiCreatedWithLocation(ConsentView, 'consent')
  async createConsent(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateConsentRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConsentView> {
    return withLocation(
      reply,
      ConsentView.of(await this.consents.createAccountConsent(principal.tenantId, body)),
    );
  }

  @Get(':consentId')
  @ApiOperation({
    summary: 'Get a consent',
    description: 'With its status brought up to date from the bank.',
  })
  @ApiOkResponse({ type: ConsentView })
  @ApiProblems({ 404: 'No such consent for this tenant (code CONSENT_UNKNOWN)' })
  async getConsent(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ConsentParams,
  ): Promise<ConsentView> {
    return ConsentView.of(
      await this.consents.refresh(
        await this.consents.find(principal.tenantId, params.consentId, 'ais'),
      ),
    );
  }

  @Get(':consentId/status')
  @ApiOperation({
    summary: "Get a consent's status",
    description: 'Brought up to date from the bank while it can still change.',
  })
  @ApiOkResponse({ type: ConsentStatusView })
  @ApiProblems({ 404: 'No such consent for this tenant (code CONSENT_UNKNOWN)' })
  async getConsentStatus(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ConsentParams,
  ): Promise<ConsentStatusView> {
    const consent = await this.consents.refresh(
      await this.consents.find(principal.tenantId, params.consentId, 'ais'),
    );
    return { consentId: consent.id, status: consent.status };
  }

  @Delete(':consentId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a consent',
    description: 'Terminates it at the bank (terminatedByTpp). Deleting it again is harmless.',
  })
  @ApiNoContentResponse({ description: 'Terminated' })
  @ApiProblems({
    404: 'No such consent for this tenant (code CONSENT_UNKNOWN)',
    409: 'The consent is already rejected, revoked or expired (code STATUS_INVALID)',
  })
  async deleteConsent(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ConsentParams,
  ): Promise<void> {
    await this.consents.delete(
      await this.consents.find(principal.tenantId, params.consentId, 'ais'),
    );
  }
}
