import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiProblems } from '#src/platform/errors/api-problem-responses.js';
import { ScaCallbackService } from './sca-callback.service.js';

/** Where the bank sends the user's browser back: Portico records the outcome and forwards the browser to the app. */
@ApiTags('SCA callback')
@Controller('v1/sca/callback')
export class ScaCallbackController {
  constructor(private readonly callback: ScaCallbackService) {}

  @Get(':state')
  @ApiOperation({
    summary: 'Return from the bank (browser)',
    description:
      "Not called by apps: Portico gives this address to the bank as TPP-Redirect-URI. It takes the single-use state, reads the outcome from the bank, records it, and redirects the browser (303) to the app's redirectUri (or nokRedirectUri when refused) with `consentId`/`paymentId` and `status` in the query string.",
  })
  @ApiParam({
    name: 'state',
    description: 'The single-use state Portico put in the address',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', maxLength: 43 },
  })
  @ApiResponse({ status: 303, description: "To the app's redirect address with the outcome" })
  @ApiProblems({
    400: 'Malformed state',
    410: 'Unknown, expired or already used state',
    500: 'An unexpected failure',
  })
  async completeSca(
    @Param('state') state: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const location = await this.callback.complete(state, request.ip);
    await reply.code(303).header('location', location).header('cache-control', 'no-store').send();
  }
}
