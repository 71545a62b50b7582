import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProviderSyncParts } from '#src/platform/provider-sync/provider-sync.js';
import { CardNotificationsService } from './card-notifications.service.js';

/** A link without an expiration_date is read this long at most (the provider never expires it). */
const NOTIFICATION_SYNC_LIFETIME_MS = 31 * 86_400_000;

/**
 * The provider sends no event when a hosted payment link is paid: a `Pending` notification is read
 * until it is Paid, Expired or Canceled (the provider moves an expired link itself), so that the app
 * hears of the payment by the notification.status_changed webhook without reading it.
 */
@Injectable()
export class NotificationSync implements OnModuleInit {
  constructor(
    private readonly parts: ProviderSyncParts,
    private readonly notifications: CardNotificationsService,
  ) {}

  onModuleInit(): void {
    this.parts.register({
      name: 'notifications',
      pending: {
        table: 'provider_resources',
        kinds: ['notification'],
        statuses: ['Pending'],
        lifetimeMs: NOTIFICATION_SYNC_LIFETIME_MS,
      },
      refresh: (id) => this.notifications.refresh(id),
    });
  }
}
