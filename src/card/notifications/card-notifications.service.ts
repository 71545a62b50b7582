import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import { isUuid } from '#src/shared/uuid.js';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { settleLostCreation } from '../store/lost-creation.js';
import { notificationDigest } from './notification-match.js';

export type ProviderNotification = components['schemas']['Notification'];

/** The provider refuses an expiration_date less than 5 minutes after the creation (seed 000, Limits). */
const MIN_LINK_LIFETIME_MS = 5 * 60_000;
/** Room for the call to reach the provider, so that a date the facade takes the provider takes too. */
const CALL_MARGIN_MS = 15_000;

/** The provider's rule on a link's expiry, checked before calling it, named in the facade's spelling. */
function expiryRefusal(form: CardForm<'CreateNotificationForm'>): ValidationFailedException | null {
  if (typeof form.expiration_date !== 'string') return null;
  const earliest = new Date(Date.now() + MIN_LINK_LIFETIME_MS + CALL_MARGIN_MS);
  if (new Date(form.expiration_date).getTime() >= earliest.getTime()) return null;
  return new ValidationFailedException([
    {
      field: 'expirationDate',
      reason: `must be at least 5 minutes after the link's creation (the provider refuses an earlier one): ${earliest.toISOString()} or later`,
    },
  ]);
}

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
    const refusal = expiryRefusal(form);
    if (refusal) throw refusal;
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
   */
  settleInDoubt(row: CardRow<'notification'>, callMs: number): Promise<void> {
    return settleLostCreation(this.store, row, callMs, {
      list: (query) => this.store.call(row.tenantId, 'listNotifications', { query }, row),
      matches: (item, fingerprint) => notificationDigest(item) === fingerprint,
      statusOf: (item) => item.status,
    });
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
