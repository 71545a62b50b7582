import { Module } from '@nestjs/common';
import { WebhookOutboxService } from './webhook-outbox.service.js';

/** The outbox alone, for the capabilities that record events (no worker, no HTTP). */
@Module({ providers: [WebhookOutboxService], exports: [WebhookOutboxService] })
export class WebhookOutboxModule {}
