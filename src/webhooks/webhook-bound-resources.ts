import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BoundResources } from '../platform/idempotency/bound-resources.js';
import { WebhookEndpointView } from './dto/webhook.dto.js';
import { endpointPath, WebhooksService } from './webhooks.service.js';

/**
 * A repeat of an idempotent endpoint creation answers the endpoint as it stands, with its secret
 * opened again: the first answer is not stored, since it holds the secret kept sealed in the endpoint.
 */
@Injectable()
export class WebhookBoundResources implements OnModuleInit {
  constructor(
    private readonly resources: BoundResources,
    private readonly webhooks: WebhooksService,
  ) {}

  onModuleInit(): void {
    this.resources.register({
      prefix: endpointPath(''),
      read: async (tenantId, endpointId) => {
        const endpoint = await this.webhooks.endpointWithSecret(tenantId, endpointId);
        return {
          state: 'settled',
          body: { ...WebhookEndpointView.of(endpoint), secret: endpoint.secret },
        };
      },
    });
  }
}
