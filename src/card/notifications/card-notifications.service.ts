import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';

export type ProviderNotification = components['schemas']['Notification'];

/**
 * Notifications (hosted payment links): a row per notification the tenant made, written before the
 * provider is called, its status kept up to date (with history and the notification.status_changed
 * event) whenever Portico reads it. The provider takes no reference of ours on a notification, so one
 * whose creation answer was lost stays in doubt (`unknown`) for the app to see, never failed.
 */
@Injectable()
export class CardNotificationsService {
  constructor(private readonly store: CardStore) {}

  async create(
    tenantId: string,
    form: CardForm<'CreateNotificationForm'>,
  ): Promise<ProviderNotification> {
    const row = await this.store.begin(
      tenantId,
      'notification',
      { amount: form.amount },
      {
        operation: 'createNotification',
        resource: (notificationId) => `/v1/card/notifications/${notificationId}`,
      },
    );
    return this.store.create(row, {
      names: () => ({ notificationId: row.id }),
      send: () => this.store.call(tenantId, 'createNotification', { form }, row),
      settle: (made) => this.store.settle(row, made, made.status, 'upstream-created'),
    });
  }

  /** A notification by the provider's id, its row brought up to date (Paid, Expired: an event). */
  async get(tenantId: string, token: string): Promise<ProviderNotification> {
    const row = await this.store.owned(tenantId, 'notification', token);
    return this.read(tenantId, token, row, 'upstream-status');
  }

  /** A pending notification read by the provider sync, as a GET reads it. */
  async refresh(id: string): Promise<void> {
    const row = await this.store.row('notification', id);
    if (row?.token) await this.read(row.tenantId, row.token, row, 'provider-sync');
  }

  private async read(
    tenantId: string,
    token: string,
    row: CardRow<'notification'> | undefined,
    cause: string,
  ): Promise<ProviderNotification> {
    const notification = await this.store.call(
      tenantId,
      'retrieveNotification',
      { path: { notificationId: token } },
      row,
    );
    await this.track(tenantId, row, notification, cause);
    return notification;
  }

  list(tenantId: string, query: CardQueryOf<'listNotifications'>) {
    return this.store.call(tenantId, 'listNotifications', { query });
  }

  async cancel(tenantId: string, token: string): Promise<ProviderNotification> {
    const row = await this.store.owned(tenantId, 'notification', token);
    const notification = await this.store.call(
      tenantId,
      'cancelNotification',
      { path: { notificationId: token } },
      row,
    );
    await this.track(tenantId, row, notification, 'canceled');
    return notification;
  }

  private async track(
    tenantId: string,
    row: CardRow<'notification'> | undefined,
    notification: ProviderNotification,
    cause: string,
  ): Promise<void> {
    if (!row) await this.store.adopt(tenantId, 'notification', notification, notification.status);
    else if (row.status !== notification.status)
      await this.store.settle(row, notification, notification.status, cause);
  }
}
