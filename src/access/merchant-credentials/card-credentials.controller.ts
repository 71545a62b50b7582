import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../auth/auth.decorator.js';
import { TenantParams } from '../tenants/dto/params.dto.js';
import type { Principal } from '../tenants/tenants.service.js';
import { TenantsService } from '../tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { CardCredentialsService } from './card-credentials.service.js';
import { CardCredentialsView, SetCardCredentialsRequest } from './card-credentials.dto.js';

@ApiTags('Tenants and API keys')
@ApiStandardProblems()
@Controller('v1/tenants/:tenantId/card-credentials')
export class CardCredentialsController {
  constructor(
    private readonly credentials: CardCredentialsService,
    private readonly tenants: TenantsService,
  ) {}

  @Put()
  @Auth('operator')
  @ApiOperation({
    summary: "Set a tenant's card merchant keys",
    description:
      "The tenant's secret and public keys at the card provider (its own merchant account). Stored encrypted (AES-256-GCM); the answer and every later read show them masked only. Replaces keys set before (in sandbox mode, the sandbox merchant given at creation). Role operator.",
  })
  @ApiOkResponse({ type: CardCredentialsView })
  @ApiProblems({ 404: 'No such tenant' })
  async setCardCredentials(
    @Param() params: TenantParams,
    @Body() body: SetCardCredentialsRequest,
  ): Promise<CardCredentialsView> {
    const tenant = await this.tenants.findTenant(params.tenantId);
    return CardCredentialsView.of(await this.credentials.set(tenant.id, body));
  }

  @Get()
  @Auth('operator', 'admin')
  @ApiOperation({
    summary: "Show a tenant's card merchant keys, masked",
    description:
      "Prefix and last four characters of each key, never more. Role operator: any tenant. Role admin: the key's own tenant (another answers 404).",
  })
  @ApiOkResponse({ type: CardCredentialsView })
  @ApiProblems({ 404: 'No such tenant, or it has no card merchant keys' })
  async getCardCredentials(
    @Param() params: TenantParams,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CardCredentialsView> {
    const tenant = await this.tenants.findTenantFor(principal, params.tenantId);
    const view = await this.credentials.view(tenant.id);
    if (!view)
      throw new ProblemException({
        status: 404,
        type: PROBLEM_TYPES.notFound,
        title: 'Not Found',
        detail: `Tenant ${tenant.id} has no card merchant keys`,
      });
    return CardCredentialsView.of(view);
  }
}
