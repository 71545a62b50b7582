import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { isUuid } from '#src/shared/uuid.js';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { NOTIFICATION_CLOCK_SKEW_MS, notificationDigest, utcDay } from './notification-match.js';

export type ProviderNotification = components['schemas']['Notification'];

/** The provider's largest page (card.yaml Count). */
const PAGE = 20;

/**
 * Notifications (hosted payment links): a row per notification the tenant made, written before the
 * provider is called, its status kept up to date (with history and the notification.status_changed
 * event) whenever Portico reads it. The provider takes no reference of ours on a notification, so one
 * whose creation answer was lost is looked for among the provider's by the fields Portico sent.
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
      { amount: form.amount, parentToken: notificationDigest(form) },
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

  /**
   * A notification by the provider's id or Portico's (one in doubt has only that), its row brought up
   * to date (Paid, Expired: an event).
   */
  async get(tenantId: string, id: string): Promise<ProviderNotification> {
    const token = await this.tokenOf(tenantId, id);
    const row = await this.store.owned(tenantId, 'notification', token);
    return this.read(tenantId, token, row, 'upstream-status');
  }

  /** The provider's id of a notification named by it or by Portico's id (409 while in doubt). */
  private async tokenOf(tenantId: string, id: string): Promise<string> {
    if (!isUuid(id)) return id;
    const row = await this.store.byId(tenantId, 'notification', id);
    if (!row.token) throw this.store.notKnownYet('notification', row);
    return row.token;
  }

  /**
   * Settles a notification whose creation answer was lost (the resolver): found at the provider, it
   * takes the provider's status; certainly absent, it failed (nothing was e-mailed, nobody can pay it).
   * A list that cannot be read leaves it in doubt for the next pass.
   */
  async settleInDoubt(row: CardRow<'notification'>, callMs: number): Promise<void> {
    // A row begun before its fields' digest was kept cannot be recognised: it stays in doubt.
    if (!row.parentToken) return;
    const found = await this.findLost(row, callMs);
    if (found) await this.store.settle(row, found, found.status, 'resolver:found-at-provider');
    else await this.store.transition(row, 'failed', 'resolver:not-at-provider');
  }

  /**
   * Among the provider's notifications created while the row's call could have been made (clocks
   * apart), the oldest with the row's fields that no row of the tenant holds (the resolver takes
   * identical rows oldest first).
   */
  private async findLost(
    row: CardRow<'notification'>,
    callMs: number,
  ): Promise<ProviderNotification | undefined> {
    const from = row.createdAt.getTime() - NOTIFICATION_CLOCK_SKEW_MS;
    const to = row.createdAt.getTime() + callMs + NOTIFICATION_CLOCK_SKEW_MS;
    const query = { date_from: utcDay(from), date_to: utcDay(to), count: PAGE };
    const matching: ProviderNotification[] = [];
    // Most recent first: read back until the window's start (new ones only push the rest further).
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.store.call(
        row.tenantId,
        'listNotifications',
        { query: { ...query, offset } },
        row,
      );
      for (const item of page.items) {
        const at = Date.parse(item.date_created);
        if (at >= from && at <= to && notificationDigest(item) === row.parentToken)
          matching.push(item);
      }
      const oldest = page.items.at(-1);
      if (page.items.length < PAGE || !oldest || Date.parse(oldest.date_created) < from) break;
    }
    const held = await this.store.heldTokens(
      row.tenantId,
      matching.map((item) => item.token),
    );
    return matching.reverse().find((item) => !held.has(item.token));
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

  async cancel(tenantId: string, id: string): Promise<ProviderNotification> {
    const token = await this.tokenOf(tenantId, id);
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
