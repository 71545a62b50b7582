import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiProblems } from '#src/platform/errors/api-problem-responses.js';
import { FORM_BODY_ROUTE } from '#src/platform/errors/request-bodies.js';
import { CardWalletResultsService } from './card-wallet-results.service.js';
import { walletView } from './wallet-tokenization.js';

/**
 * Portico as the merchant's server of the PAN-only web-wallet flow: the provider's page posts the
 * signed card token here through the payer's browser. Not called by apps; no API key: the message's
 * hash is the authentication.
 */
@ApiTags('Card wallet results')
@Controller('v1/card/wallets')
export class CardWalletResultsController {
  constructor(private readonly results: CardWalletResultsService) {}

  @Post('callback/:reference')
  @RouteConfig(FORM_BODY_ROUTE)
  @ApiOperation({
    summary: 'Web-wallet PAN-only result from the payer’s browser (provider callback)',
    description:
      "Not called by apps. The provider's form POST (token, md, hash). Portico verifies the hash with the tenant's secret key, records the card token as chargeable and redirects the browser (303) to the app's returnUrl with `walletTokenization` and `status`.",
  })
  @ApiParam({
    name: 'reference',
    description: 'The unguessable reference Portico gave the provider for one tokenisation',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', maxLength: 43 },
  })
  @ApiResponse({ status: 303, description: "To the app's returnUrl with the outcome" })
  @ApiProblems({
    400: 'A body that is not a form',
    401: 'A forged or altered hash, or a result of another tokenisation: nothing is recorded',
    404: 'No such tokenisation',
    409: 'The tokenisation expired (15 minutes) before the result arrived',
    500: 'An unexpected failure (the payer may post the result again)',
  })
  async receiveWalletCallback(
    @Param('reference') reference: string,
    @Body() body: Record<string, unknown> | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const view = walletView(await this.results.receive(reference, body ?? {}));
    const target = new URL(view.returnUrl);
    target.searchParams.set('walletTokenization', view.id);
    target.searchParams.set('status', view.status);
    await reply
      .code(303)
      .header('location', target.toString())
      .header('cache-control', 'no-store')
      .send();
  }
}
