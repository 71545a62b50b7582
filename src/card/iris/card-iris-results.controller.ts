import { Body, Controller, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiProblems } from '#src/platform/errors/api-problem-responses.js';
import { FORM_BODY_ROUTE } from '#src/platform/errors/request-bodies.js';
import { IrisResultReceived } from './card-iris.dto.js';
import { irisView } from './card-iris.service.js';
import { CardIrisResultsService } from './card-iris-results.service.js';

const Reference = () =>
  ApiParam({
    name: 'reference',
    description: 'The unguessable reference Portico gave the provider for one session',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', maxLength: 43 },
  });

/**
 * Portico as the merchant's server of the IRIS flow: the provider's callback (the payer's browser
 * posts it) and webhook. Not called by apps; no API key: the message's hash is the authentication.
 */
@ApiTags('Card IRIS results')
@Controller('v1/card/iris')
export class CardIrisResultsController {
  constructor(private readonly results: CardIrisResultsService) {}

  @Post('callback/:reference')
  @RouteConfig(FORM_BODY_ROUTE)
  @ApiOperation({
    summary: 'IRIS result from the payer’s browser (provider callback)',
    description:
      "Not called by apps. The provider's form POST (token, md, type, hash; or error_status, error_code, error_message, hash, md). Portico verifies the hash, makes the payment once and redirects the browser (303) to the app's returnUrl with `irisSession` and `status`.",
  })
  @Reference()
  @ApiResponse({ status: 303, description: "To the app's returnUrl with the outcome" })
  @ApiProblems({
    400: 'A body that is not a form',
    401: 'A forged or altered hash, or a result of another session: nothing is created',
    404: 'No such session',
    500: 'An unexpected failure (the provider sends the webhook again)',
  })
  async receiveIrisCallback(
    @Param('reference') reference: string,
    @Body() body: Record<string, unknown> | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const result = await this.results.receive(reference, body ?? {}, 'callback');
    const target = new URL(irisView(result.session).returnUrl);
    target.searchParams.set('irisSession', result.session.id);
    target.searchParams.set('status', result.status);
    await reply
      .code(303)
      .header('location', target.toString())
      .header('cache-control', 'no-store')
      .send();
  }

  @Post('webhook/:reference')
  @HttpCode(200)
  @ApiOperation({
    summary: 'IRIS result from the provider (webhook)',
    description:
      "Not called by apps. The provider's JSON webhook (token, md, hash; or md, hash, error_status, error_code, error_message). Portico verifies the hash and makes the payment once.",
  })
  @Reference()
  @ApiResponse({ status: 200, type: IrisResultReceived, description: 'Received' })
  @ApiProblems({
    400: 'A body that is not a JSON object',
    401: 'A forged or altered hash, or a result of another session: nothing is created',
    404: 'No such session',
    500: 'An unexpected failure (the provider sends the webhook again)',
  })
  async receiveIrisWebhook(
    @Param('reference') reference: string,
    @Body() body: Record<string, unknown> | undefined,
  ): Promise<IrisResultReceived> {
    const result = await this.results.receive(reference, body ?? {}, 'webhook');
    return { status: result.status };
  }
}
