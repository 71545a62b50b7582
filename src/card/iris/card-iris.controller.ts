import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { ApiCardProblems } from '../common/card-api.js';
import { CreateIrisSessionRequest, IrisPayformView, IrisSessionView } from './card-iris.dto.js';
import { CardIrisService } from './card-iris.service.js';

const SessionId = () =>
  ApiParam({
    name: 'sessionId',
    description: "Portico's id of the session",
    schema: { type: 'string', format: 'uuid', maxLength: 36 },
  });

@ApiTags('Card IRIS bank payments')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/iris/sessions')
export class CardIrisController {
  constructor(private readonly iris: CardIrisService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    summary: 'Start an IRIS bank payment',
    description:
      "Creates the provider's session (EUR) with Portico's own callback and webhook addresses. Then open the payment form (`POST …/{sessionId}/payform`) in the payer's browser; after the bank, Portico verifies the provider's signed result, makes the payment exactly once for this `amount` and sends the browser to `returnUrl`. Follow it by reading the session, or by the iris_session.status_changed and card_payment.status_changed webhooks.",
  })
  @ApiResponse({ status: 201, type: IrisSessionView, description: 'The session, `created`' })
  async createIrisSession(
    @CurrentPrincipal() principal: Principal,
    @Body() request: CreateIrisSessionRequest,
  ): Promise<IrisSessionView> {
    return this.iris.create(principal.tenantId, request);
  }

  @Get(':sessionId')
  @ApiOperation({
    summary: 'Get an IRIS session',
    description: 'Its status and, once made, the payment (`paymentId`).',
  })
  @SessionId()
  @ApiResponse({ status: 200, type: IrisSessionView, description: 'The session' })
  @ApiProblems({ 404: 'No such session for this tenant' })
  async getIrisSession(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId', new ParseUUIDPipe({ version: '4' })) sessionId: string,
  ): Promise<IrisSessionView> {
    return this.iris.get(principal.tenantId, sessionId);
  }

  @Post(':sessionId/payform')
  @HttpCode(200)
  @ApiOperation({
    summary: "Open an IRIS session's payment form",
    description:
      "The provider's payment form (an HTML form, asked with the tenant's public key) for the app's page to show; the payer submits it to reach the bank.",
  })
  @SessionId()
  @ApiResponse({ status: 200, type: IrisPayformView, description: 'The form' })
  @ApiProblems({
    404: 'No such session for this tenant',
    410: 'The session expired before the payer approved it (`urn:portico:problem:iris-session-expired`)',
  })
  async openIrisPayform(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId', new ParseUUIDPipe({ version: '4' })) sessionId: string,
  ): Promise<IrisPayformView> {
    return this.iris.payform(principal.tenantId, sessionId);
  }
}
