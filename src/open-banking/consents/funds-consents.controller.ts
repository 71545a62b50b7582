import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import { ConsentsService } from './consents.service.js';
import { ConsentStatusView, ConsentView, CreateCofConsentRequest } from './dto/consent.dto.js';
import { ConsentParams } from './dto/params.dto.js';
import { ApiCreatedWithLocation, withLocation } from '../created-location.js';

@ApiTags('Confirmation of funds')
@ApiStandardProblems()
@ApiProblems(UPSTREAM_PROBLEMS)
@Auth('app')
@Controller('v1/funds-confirmation-consents')
export class FundsConsentsController {
  constructor(private readonly consents: ConsentsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a confirmation-of-funds consent',
    description: "For one account. Send the user's browser to `_links.scaRedirect`.",
  })
  @Idempotent()
  @ApiCreatedWithLocation(ConsentView, 'consent')
  async createFundsConsent(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateCofConsentRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConsentView> {
    return withLocation(
      reply,
      ConsentView.of(await this.consents.createFundsConsent(principal.tenantId, body)),
    );
  }

  @Get(':consentId')
  @ApiOperation({
    summary: 'Get a confirmation-of-funds consent',
    description: 'With its status brought up to date from the bank.',
  })
  @ApiOkResponse({ type: ConsentView })
  @ApiProblems({ 404: 'No such consent for this tenant (code CONSENT_UNKNOWN)' })
  async getFundsConsent(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ConsentParams,
  ): Promise<ConsentView> {
    return ConsentView.of(
      await this.consents.refresh(
        await this.consents.find(principal.tenantId, params.consentId, 'cof'),
      ),
    );
  }

  @Get(':consentId/status')
  @ApiOperation({
    summary: "Get a confirmation-of-funds consent's status",
    description: 'Brought up to date from the bank while it can still change.',
  })
  @ApiOkResponse({ type: ConsentStatusView })
  @ApiProblems({ 404: 'No such consent for this tenant (code CONSENT_UNKNOWN)' })
  async getFundsConsentStatus(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ConsentParams,
  ): Promise<ConsentStatusView> {
    const consent = await this.consents.refresh(
      await this.consents.find(principal.tenantId, params.consentId, 'cof'),
    );
    return { consentId: consent.id, status: consent.status };
  }

  @Delete(':consentId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a confirmation-of-funds consent',
    description: 'Terminates it at the bank (terminatedByTpp). Deleting it again is harmless.',
  })
  @ApiNoContentResponse({ description: 'Terminated' })
  @ApiProblems({
    404: 'No such consent for this tenant (code CONSENT_UNKNOWN)',
    409: 'Already rejected, revoked or expired (code STATUS_INVALID)',
  })
  async deleteFundsConsent(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ConsentParams,
  ): Promise<void> {
    await this.consents.delete(
      await this.consents.find(principal.tenantId, params.consentId, 'cof'),
    );
  }
}
