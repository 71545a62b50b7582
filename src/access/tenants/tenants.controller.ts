import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '../../platform/errors/api-problem-responses.js';
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
  @Auth('admin')
  @ApiOperation({
    summary: 'Create a tenant',
    description: 'A tenant is one fintech app using the gateway. Role admin.',
  })
  @ApiCreatedResponse({ type: TenantView })
  @ApiProblems({ 409: 'A tenant with this slug exists' })
  async createTenant(@Body() body: CreateTenantRequest): Promise<TenantView> {
    return TenantView.of(await this.tenants.createTenant(body.slug, body.name));
  }

  @Get('tenants')
  @Auth('admin')
  @ApiOperation({ summary: 'List tenants', description: 'Role admin.' })
  @ApiOkResponse({ type: TenantList })
  async listTenants(): Promise<TenantList> {
    return { tenants: (await this.tenants.listTenants()).map((tenant) => TenantView.of(tenant)) };
  }

  @Post('tenants/:tenantId/api-keys')
  @Auth('admin')
  @ApiOperation({
    summary: 'Issue an API key',
    description: 'The key is in this answer only; Portico stores its hash. Role admin.',
  })
  @ApiCreatedResponse({ type: IssuedApiKey })
  @ApiProblems({ 404: 'No such tenant' })
  async issueApiKey(
    @Param() params: TenantParams,
    @Body() body: IssueApiKeyRequest,
  ): Promise<IssuedApiKey> {
    const { apiKey, key } = await this.tenants.issueKey(params.tenantId, body.role, body.label);
    return { ...ApiKeyView.of(apiKey), key };
  }

  @Get('tenants/:tenantId/api-keys')
  @Auth('admin')
  @ApiOperation({
    summary: "List a tenant's API keys",
    description: 'Without the keys themselves. Role admin.',
  })
  @ApiOkResponse({ type: ApiKeyList })
  @ApiProblems({ 404: 'No such tenant' })
  async listApiKeys(@Param() params: TenantParams): Promise<ApiKeyList> {
    return {
      apiKeys: (await this.tenants.listKeys(params.tenantId)).map((key) => ApiKeyView.of(key)),
    };
  }

  @Delete('tenants/:tenantId/api-keys/:keyId')
  @HttpCode(204)
  @Auth('admin')
  @ApiOperation({
    summary: 'Revoke an API key',
    description: 'Takes effect on the next request, on every replica. Role admin.',
  })
  @ApiNoContentResponse({ description: 'Revoked (or already revoked)' })
  @ApiProblems({ 404: 'No such key for this tenant' })
  async revokeApiKey(@Param() params: ApiKeyParams): Promise<void> {
    await this.tenants.revokeKey(params.keyId, params.tenantId);
  }
}
