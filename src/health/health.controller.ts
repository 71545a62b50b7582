import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { OptionalAuth, OptionalPrincipal } from '../access/auth/auth.decorator.js';
import type { Principal } from '../access/tenants/tenants.service.js';
import { HealthService, ReadinessReport } from '../platform/health/health.service.js';

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @HttpCode(200)
  @ApiOperation({ summary: 'Liveness', description: 'The process is up and serving HTTP.' })
  @ApiOkResponse({
    description: 'Alive',
    schema: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', enum: ['ok'] } },
    },
  })
  getLiveness(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @OptionalAuth()
  @ApiOperation({
    summary: 'Readiness',
    description:
      "Whether this replica can serve: the database answers, the client certificate is usable and the provider answers. Without a key (or with one that is not an operator's) only `status`; an operator key also gets each check, the certificate's subject, roles and expiry included.",
  })
  @ApiOkResponse({ type: ReadinessReport })
  @ApiServiceUnavailableResponse({
    type: ReadinessReport,
    description: 'A check failed, or the replica is shutting down',
  })
  async getReadiness(
    @Res({ passthrough: true }) reply: FastifyReply,
    @OptionalPrincipal() principal: Principal | undefined,
  ): Promise<ReadinessReport> {
    const report = await this.health.readiness();
    reply.status(report.status === 'ok' ? 200 : 503);
    // The checks name the certificate and the provider: the installation's business, not a probe's.
    return principal?.role === 'operator' ? report : { status: report.status };
  }
}
