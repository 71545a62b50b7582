import { CardError, type CardContext } from './card-context.js';

/**
 * How a merchant's answers spell what the seed and the provider's public clients spell differently
 * (card.yaml `x-portico-spellings`): `seed` (the default) or `provider-clients`, as their fixtures show.
 */
export const ANSWER_STYLES = ['seed', 'provider-clients'] as const;
export type AnswerStyle = (typeof ANSWER_STYLES)[number];

const clients = (context: CardContext) => context.book.merchant.answerStyle === 'provider-clients';

const PAYMENT_STATUS: Record<string, string> = { 'Pre Authorized': 'Pre authorized' };
const NOTIFICATION_STATUS: Record<string, string> = { Pending: 'Awaiting' };

export const paymentStatusAs = (context: CardContext, status: string): string =>
  clients(context) ? (PAYMENT_STATUS[status] ?? status) : status;

export const notificationStatusAs = (context: CardContext, status: string): string =>
  clients(context) ? (NOTIFICATION_STATUS[status] ?? status) : status;

/** An unknown card token: 404 in the seed's table, 400 in the clients' fixtures (20005 both). */
export const unknownCardToken = (context: CardContext): CardError =>
  new CardError(clients(context) ? 400 : 404, 20005);

/** A refund of a fully refunded payment: 40006 in the seed's table, 40015 in the clients' fixtures. */
export const fullyRefunded = (context: CardContext, payment: string): CardError =>
  clients(context)
    ? new CardError(400, 40015, payment, 'Refunded')
    : new CardError(400, 40006, payment);
