import { CardError, type CardContext } from '../card-context.js';
import { createPayment } from '../card-payments.js';
import type { PaymentRecord } from '../card-state.js';
import { knownNotification } from './notifications.js';
import type { NotificationRecord } from './notification-record.js';

/** The card arguments a payer types on the hosted page. */
export interface HostedCard {
  card_number: string;
  expiration_month: string;
  expiration_year: string;
  holder_name: string;
  cvv: string;
}

/** A notification whose page may still be paid: Pending, not past its expiration_date. */
export function payableNotification(context: CardContext, id: string): NotificationRecord {
  const notification = knownNotification(context, id);
  if (notification.status !== 'Pending')
    throw new CardError(400, 45001, notification.token, notification.status);
  return notification;
}

/**
 * The payer pays the notification with a card on the hosted page. The card is charged as
 * POST /payments charges it (the same test cards, the same refusals); a refusal leaves the
 * notification Pending for another attempt. Success makes it Paid with its payment; with
 * create_customer the new customer carries payee_name and payee_email.
 */
export function payNotification(
  context: CardContext,
  id: string,
  card: HostedCard,
): NotificationRecord {
  const notification = payableNotification(context, id);
  const answer = createPayment(context, {
    operationId: 'createPayment',
    params: {},
    query: {},
    body: {
      amount: notification.amount,
      ...card,
      description: notification.description,
      payee_email: notification.payeeEmail,
      payee_phone: notification.payeePhone,
      metadata: notification.metadata,
      create_customer: notification.createCustomer ? 1 : 0,
      split: notification.split ? 1 : 0,
    },
  });
  const paymentId = (answer.body as { token: string }).token;
  const payment = context.book.payments.get(paymentId) as PaymentRecord;
  const customerId = payment.card?.customer;
  const customer = customerId ? context.book.customers.get(customerId) : undefined;
  if (customer) {
    customer.fullName = notification.payeeName;
    context.state.put(context.book, 'customer', customer);
  }
  notification.status = 'Paid';
  notification.payment = paymentId;
  context.state.put(context.book, 'notification', notification);
  return notification;
}
