import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../platform/idempotency/idempotency.module.js';
import { SecretsModule } from '../platform/secrets/secrets.module.js';
import { SecretsResealService } from '../platform/secrets/secrets-reseal.service.js';
import { WebhookBoundResources } from './webhook-bound-resources.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDeliveryWorker } from './webhook-delivery.worker.js';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { WebhookEndpointHealth } from './webhook-endpoint-health.js';
import { WebhookOutboxModule } from './webhook-outbox.module.js';
import { WEBHOOK_SEALED_SECRETS } from './webhook-secrets.js';
import { WEBHOOK_ENTITIES } from './webhook.entities.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Endpoints and the event log, without the worker (what the CLI needs). */
@Module({
  imports: [TypeOrmModule.forFeature(WEBHOOK_ENTITIES), WebhookOutboxModule, SecretsModule],
  providers: [WebhookEndpointsRepository, WebhookDeliveriesRepository, WebhooksService],
  exports: [WebhookEndpointsRepository, WebhookDeliveriesRepository, WebhooksService],
})
export class WebhooksCoreModule {
  constructor(reseal: SecretsResealService) {
    reseal.register(WEBHOOK_SEALED_SECRETS);
  }
}

/** Signed webhooks to apps: the API and the delivery worker. */
@Module({
  imports: [WebhooksCoreModule, WebhookOutboxModule, SecretsModule, IdempotencyModule],
  controllers: [WebhooksController],
  providers: [WebhookDeliveryWorker, WebhookEndpointHealth, WebhookBoundResources],
  exports: [WebhookDeliveryWorker],
})
export class WebhooksModule {}
