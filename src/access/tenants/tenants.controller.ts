import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import type { Principal } from './tenants.service.js';
import { TenantsService } from './tenants.service.js';
import {
  ApiKeyList,
  ApiKeyView,
  IssueApiKeyRequest,
  IssuedApiKey,
  PrincipalView,
} from './dto/api-key.dto.js';
import { ApiKeyParams, TenantParams } from './dto/params.dto.js';
import { CreateTenantRequest, TenantList, TenantView } from './dto/tenant.dto.js';

@ApiTags('Tenants and API keys')
@ApiStandardProblems()
@Controller('v1')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Get('me')
  @Auth()
  @ApiOperation({
    summary: 'Who am I',
    description: 'The tenant and role of the API key making the call. Any role.',
  })
  @ApiOkResponse({ type: PrincipalView })
  getCurrentPrincipal(@CurrentPrincipal() principal: Principal): PrincipalView {
    return principal;
  }

  @Post('tenants')
  @Auth('operator')
  @ApiOperation({
    summary: 'Create a tenant',
    description: 'A tenant is one fintech app using the gateway. Role operator.',
  })
  @ApiCreatedResponse({ type: TenantView })
  @ApiProblems({ 409: 'A tenant with this slug exists' })
  async createTenant(@Body() body: CreateTenantRequest): Promise<TenantView> {
    return TenantView.of(await this.tenants.createTenant(body.slug, body.name));
  }

  @Get('tenants')
  @Auth('operator', 'admin')
  @ApiOperation({
    summary: 'List tenants',
    description: "Role operator: every tenant. Role admin: the key's own tenant only.",
  })
  @ApiOkResponse({ type: TenantList })
  async listTenants(@CurrentPrincipal() principal: Principal): Promise<TenantList> {
    const tenants = await this.tenants.listTenantsFor(principal);
    return { totalCount: tenants.length, items: tenants.map((tenant) => TenantView.of(tenant)) };
  }

  @Post('tenants/:tenantId/api-keys')
  @Auth('operator', 'admin')
  @ApiOperation({
    summary: 'Issue an API key',
    description:
      "The key is in this answer only; Portico stores its hash. Role operator: any tenant, any role. Role admin: app and admin keys of the key's own tenant (another tenant answers 404).",
  })
  @ApiCreatedResponse({ type: IssuedApiKey })
  @ApiProblems({
    403: 'An admin key asked for an auditor or operator key (only an operator issues those)',
    404: 'No such tenant (or, for an admin key, not its own)',
  })
  async issueApiKey(
    @Param() params: TenantParams,
    @Body() body: IssueApiKeyRequest,
    @CurrentPrincipal() principal: Principal,
  ): Promise<IssuedApiKey> {
    const { apiKey, key } = await this.tenants.issueKeyFor(
      principal,
      params.tenantId,
      body.role,
      body.label,
    );
    return { ...ApiKeyView.of(apiKey), key };
  }

  @Get('tenants/:tenantId/api-keys')
  @Auth('operator', 'admin')
  @ApiOperation({
    summary: "List a tenant's API keys",
    description:
      "Without the keys themselves. Role operator: any tenant. Role admin: the key's own tenant.",
  })
  @ApiOkResponse({ type: ApiKeyList })
  @ApiProblems({ 404: 'No such tenant (or, for an admin key, not its own)' })
  async listApiKeys(
    @Param() params: TenantParams,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ApiKeyList> {
    const keys = await this.tenants.listKeysFor(principal, params.tenantId);
    return { totalCount: keys.length, items: keys.map((key) => ApiKeyView.of(key)) };
  }

  @Delete('tenants/:tenantId/api-keys/:keyId')
  @HttpCode(204)
  @Auth('operator', 'admin')
  @ApiOperation({
    summary: 'Revoke an API key',
    description:
      "Takes effect on the next request, on every replica. Role operator: any key. Role admin: app and admin keys of the key's own tenant.",
  })
  @ApiNoContentResponse({ description: 'Revoked (or already revoked)' })
  @ApiProblems({
    403: 'An admin key tried to revoke an auditor or operator key',
    404: 'No such key for this tenant (or, for an admin key, not its own tenant)',
  })
  async revokeApiKey(
    @Param() params: ApiKeyParams,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    await this.tenants.revokeKeyFor(principal, params.tenantId, params.keyId);
  }
}
