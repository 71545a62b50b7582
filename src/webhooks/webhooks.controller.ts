import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../access/auth/auth.decorator.js';
import type { Principal } from '../access/tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '../platform/errors/api-problem-responses.js';
import { Idempotent } from '../platform/idempotency/idempotent.decorator.js';
import {
  CreateWebhookEndpointRequest,
  EndpointParams,
  EventParams,
  WebhookEndpointList,
  WebhookEndpointView,
  WebhookEndpointWithSecret,
  WebhookEventDetail,
  WebhookEventPage,
  WebhookEventsQuery,
  WebhookReplay,
} from './dto/webhook.dto.js';
import { WebhooksService } from './webhooks.service.js';

const withSecret = (
  endpoint: Parameters<typeof WebhookEndpointView.of>[0] & { secret: string },
) => ({
  ...WebhookEndpointView.of(endpoint),
  secret: endpoint.secret,
});

@ApiTags('Webhooks')
@ApiStandardProblems()
@Auth('app', 'admin')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('endpoints')
  @Idempotent({ readBack: true })
  @ApiOperation({
    summary: 'Register a webhook endpoint',
    description:
      "Events of the chosen types are POSTed to the URL, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the endpoint's secret, which this answer shows once (and a repeat with the same Idempotency-Key, which answers the endpoint made first). Role app or admin, for the key's own tenant.",
  })
  @ApiCreatedResponse({ type: WebhookEndpointWithSecret })
  async createWebhookEndpoint(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateWebhookEndpointRequest,
  ): Promise<WebhookEndpointWithSecret> {
    return withSecret(await this.webhooks.createEndpoint(principal.tenantId, body));
  }

  @Get('endpoints')
  @ApiOperation({
    summary: "List the tenant's webhook endpoints",
    description: 'Never the secrets.',
  })
  @ApiOkResponse({ type: WebhookEndpointList })
  async listWebhookEndpoints(
    @CurrentPrincipal() principal: Principal,
  ): Promise<WebhookEndpointList> {
    const endpoints = await this.webhooks.listEndpoints(principal.tenantId);
    return {
      totalCount: endpoints.length,
      items: endpoints.map((endpoint) => WebhookEndpointView.of(endpoint)),
    };
  }

  @Get('endpoints/:endpointId')
  @ApiOperation({ summary: 'Get a webhook endpoint', description: 'Never its secret.' })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiProblems({ 404: 'No such endpoint for this tenant' })
  async getWebhookEndpoint(
    @CurrentPrincipal() principal: Principal,
    @Param() params: EndpointParams,
  ): Promise<WebhookEndpointView> {
    return WebhookEndpointView.of(
      await this.webhooks.findEndpoint(principal.tenantId, params.endpointId),
    );
  }

  @Delete('endpoints/:endpointId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove a webhook endpoint',
    description: 'Nothing more is sent to it; its pending deliveries are cancelled.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiProblems({ 404: 'No such endpoint for this tenant' })
  async removeWebhookEndpoint(
    @CurrentPrincipal() principal: Principal,
    @Param() params: EndpointParams,
  ): Promise<void> {
    await this.webhooks.removeEndpoint(principal.tenantId, params.endpointId);
  }

  @Post('endpoints/:endpointId/resume')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resume a webhook endpoint',
    description:
      'For an endpoint paused after failing for WEBHOOK_PAUSE_AFTER_MS (or one backing off): it is attempted again at once, and the events kept for it while paused are sent.',
  })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiProblems({ 404: 'No such endpoint for this tenant' })
  async resumeWebhookEndpoint(
    @CurrentPrincipal() principal: Principal,
    @Param() params: EndpointParams,
  ): Promise<WebhookEndpointView> {
    return WebhookEndpointView.of(
      await this.webhooks.resumeEndpoint(principal.tenantId, params.endpointId),
    );
  }

  @Post('endpoints/:endpointId/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    summary: "Rotate a webhook endpoint's secret",
    description:
      'A new secret, shown once. Until `previousSecretExpiresAt` (WEBHOOK_SECRET_GRACE_MS) every attempt carries two signatures, one per secret, so the app can switch without losing an event.',
  })
  @ApiOkResponse({ type: WebhookEndpointWithSecret })
  @ApiProblems({ 404: 'No such endpoint for this tenant' })
  async rotateWebhookSecret(
    @CurrentPrincipal() principal: Principal,
    @Param() params: EndpointParams,
  ): Promise<WebhookEndpointWithSecret> {
    return withSecret(await this.webhooks.rotateSecret(principal.tenantId, params.endpointId));
  }

  @Get('events')
  @ApiOperation({
    summary: "List the tenant's webhook events",
    description: 'Newest first, with their deliveries by state; filtered and paged.',
  })
  @ApiOkResponse({ type: WebhookEventPage })
  listWebhookEvents(
    @CurrentPrincipal() principal: Principal,
    @Query() query: WebhookEventsQuery,
  ): Promise<WebhookEventPage> {
    return this.webhooks.listEvents(principal.tenantId, query);
  }

  @Get('events/:eventId')
  @ApiOperation({
    summary: 'Get a webhook event with its deliveries and every attempt',
    description: 'Each attempt with its outcome, response status, latency and error.',
  })
  @ApiOkResponse({ type: WebhookEventDetail })
  @ApiProblems({ 404: 'No such event for this tenant' })
  getWebhookEvent(
    @CurrentPrincipal() principal: Principal,
    @Param() params: EventParams,
  ): Promise<WebhookEventDetail> {
    return this.webhooks.eventDetail(principal.tenantId, params.eventId);
  }

  @Post('events/:eventId/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a webhook event again',
    description:
      'A new delivery to every endpoint now subscribed to its type, with the same webhook-id (a receiver that keeps the ids it handled will ignore it). Dead-lettered events are sent again this way.',
  })
  @ApiAcceptedResponse({ type: WebhookReplay })
  @ApiProblems({
    404: 'No such event for this tenant',
    409: 'No endpoint of the tenant is subscribed to the event type',
  })
  async replayWebhookEvent(
    @CurrentPrincipal() principal: Principal,
    @Param() params: EventParams,
  ): Promise<WebhookReplay> {
    return {
      eventId: params.eventId,
      deliveryIds: await this.webhooks.replay(principal.tenantId, params.eventId),
    };
  }
}
