import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiProblems } from '../../platform/errors/api-problem-responses.js';
import { ProblemException } from '../../platform/errors/problem.js';
import { ConsentsService } from '../consents/consents.service.js';
import { PaymentsService, REFUSED_PAYMENT_STATUSES } from '../payments/payments.service.js';
import { ScaSessionsService } from '../sca-sessions/sca-sessions.service.js';

function withQuery(uri: string, query: Record<string, string>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}

/** Where the bank sends the user's browser back: Portico records the outcome and forwards the browser to the app. */
@ApiTags('SCA callback')
@Controller('v1/sca/callback')
export class ScaCallbackController {
  constructor(
    private readonly sessions: ScaSessionsService,
    private readonly consents: ConsentsService,
    private readonly payments: PaymentsService,
  ) {}

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
    const session = /^[A-Za-z0-9_-]{43}$/.test(state)
      ? await this.sessions.consume(state)
      : undefined;
    if (!session) {
      throw new ProblemException({
        status: 410,
        type: 'urn:portico:problem:sca-state-gone',
        title: 'Gone',
        detail:
          'This return address is unknown, expired or was already used. Start again from the app.',
      });
    }
    let location: string;
    if (session.subjectKind === 'consent') {
      const consent = await this.consents.completeSca(
        await this.consents.find(session.tenantId, session.subjectId),
        request.ip,
      );
      const target =
        consent.status === 'valid'
          ? consent.redirectUri
          : (consent.nokRedirectUri ?? consent.redirectUri);
      location = withQuery(target, { consentId: consent.id, status: consent.status });
    } else {
      const payment = await this.payments.completeSca(
        await this.payments.find(session.tenantId, session.subjectId),
      );
      const target = REFUSED_PAYMENT_STATUSES.includes(payment.status)
        ? (payment.nokRedirectUri ?? payment.redirectUri)
        : payment.redirectUri;
      location = withQuery(target, { paymentId: payment.id, status: payment.status });
    }
    await reply.code(303).header('location', location).header('cache-control', 'no-store').send();
  }
}
