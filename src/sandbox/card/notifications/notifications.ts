import {
  CardError,
  invalid,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { notificationStatusAs } from '../answer-style.js';
import { knownPayment, viewPayment } from '../card-payments.js';
import { timestamp } from '../card-views.js';
import type { NotificationRecord } from './notification-record.js';

/** An expiration_date must be at least this far after creation (seed 000, Limits). */
export const MIN_LINK_LIFETIME_MS = 5 * 60_000;

/** Where the hosted pages live; set once the sandbox's page listener is up. */
export interface PageAddresses {
  pagesUrl: string;
}

export const paymentLinkOf = (pages: PageAddresses, token: string) =>
  `${pages.pagesUrl}/pay/${token}`;

/** Applies the move time makes: a Pending notification past its expiration_date is Expired. */
export function settleNotification(
  context: CardContext,
  notification: NotificationRecord,
): NotificationRecord {
  if (
    notification.status === 'Pending' &&
    notification.expires !== null &&
    context.now.getTime() >= new Date(notification.expires).getTime()
  ) {
    notification.status = 'Expired';
    context.state.put(context.book, 'notification', notification);
  }
  return notification;
}

export function knownNotification(context: CardContext, id: string): NotificationRecord {
  const notification = context.book.notifications.get(id);
  if (!notification) throw new CardError(404, 10002);
  return settleNotification(context, notification);
}

export function notificationView(
  context: CardContext,
  pages: PageAddresses,
  notification: NotificationRecord,
): Record<string, unknown> {
  return {
    token: notification.token,
    status: notificationStatusAs(context, notification.status),
    date_created: timestamp(notification.created),
    payment: notification.payment
      ? viewPayment(context, knownPayment(context, notification.payment))
      : null,
    payment_link_url: paymentLinkOf(pages, notification.token),
    payee_name: notification.payeeName,
    payee_email: notification.payeeEmail,
    payee_phone: notification.payeePhone,
    amount: notification.amount,
    description: notification.description,
    expiration_date: notification.expires === null ? null : timestamp(notification.expires),
    locale: notification.locale,
    skip_notify: notification.skipNotify,
    max_installments: notification.maxInstallments,
    create_customer: notification.createCustomer,
    split: notification.split,
    metadata: { ...notification.metadata },
  };
}

const SUBJECT = {
  el: (merchant: string) => `Αίτημα πληρωμής από ${merchant}`,
  en: (merchant: string) => `Payment request from ${merchant}`,
};

/** The notification operations of card.yaml, bound to the address of the hosted pages. */
export function notificationOperations(pages: PageAddresses) {
  const view = (context: CardContext, record: NotificationRecord) =>
    ok(notificationView(context, pages, record));

  function createNotification(context: CardContext, request: CardRequest): CardAnswer {
    const { body } = request;
    const created = context.now.toISOString();
    let expires: string | null = null;
    if (body.expiration_date !== undefined) {
      const at = new Date(body.expiration_date as string);
      if (Number.isNaN(at.getTime()) || at.getTime() - context.now.getTime() < MIN_LINK_LIFETIME_MS)
        throw invalid('expiration_date');
      expires = at.toISOString();
    }
    const record: NotificationRecord = {
      token: newId('pnt'),
      merchantId: context.book.merchant.id,
      seq: context.state.nextSeq(),
      created,
      status: 'Pending',
      payeeName: body.payee_name as string,
      payeeEmail: body.payee_email as string,
      payeePhone: body.payee_phone as string,
      amount: body.amount as number,
      description: body.description as string,
      expires,
      locale: (body.locale as 'el' | 'en' | undefined) ?? 'el',
      skipNotify: body.skip_notify === 1,
      maxInstallments: (body.max_installments as number | undefined) ?? 0,
      createCustomer: body.create_customer === 1,
      split: body.split === 1,
      metadata: { ...((body.metadata as Record<string, string> | undefined) ?? {}) },
      payment: null,
    };
    context.state.put(context.book, 'notification', record);
    if (!record.skipNotify)
      context.state.put(context.book, 'mail', {
        token: newId('eml'),
        merchantId: record.merchantId,
        seq: context.state.nextSeq(),
        created,
        to: record.payeeEmail,
        subject: SUBJECT[record.locale](context.book.merchant.name),
        locale: record.locale,
        notification: record.token,
        link: paymentLinkOf(pages, record.token),
      });
    return view(context, record);
  }

  function retrieveNotification(context: CardContext, request: CardRequest): CardAnswer {
    return view(context, knownNotification(context, request.params.notificationId));
  }

  function listNotifications(context: CardContext, request: CardRequest): CardAnswer {
    const records = [...context.book.notifications.values()].map((record) =>
      settleNotification(context, record),
    );
    return page(records, request.query, (record) => notificationView(context, pages, record));
  }

  function cancelNotification(context: CardContext, request: CardRequest): CardAnswer {
    const record = knownNotification(context, request.params.notificationId);
    if (record.status !== 'Pending') throw new CardError(400, 45001, record.token, record.status);
    record.status = 'Canceled';
    context.state.put(context.book, 'notification', record);
    return view(context, record);
  }

  return { createNotification, retrieveNotification, listNotifications, cancelNotification };
}
