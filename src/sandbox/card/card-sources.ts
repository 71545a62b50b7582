import { CardContract } from '#src/shared/contracts/card-contract.js';
import { oneSourceRuleOf } from '#src/shared/contracts/one-source.js';
import { unknownCardToken } from './answer-style.js';
import { CardError, newId, type CardContext } from './card-context.js';
import { factsOf, passesLuhn } from './card-numbers.js';
import type { CardTokenRecord, CustomerRecord, StoredCard } from './card-state.js';

/** A card token lives 15 minutes (seeds/README.md). */
export const TOKEN_LIFETIME_MS = 15 * 60_000;

let cardFields: readonly string[] | undefined;

/** The card arguments: the first source of card.yaml's `x-portico-one-source`, as the gateway reads it. */
function cardFieldsOfContract(): readonly string[] {
  const contract = CardContract.committed();
  return (cardFields ??= oneSourceRuleOf(contract.schemas, contract.schemas.CreatePaymentRequest)!
    .groups[0]);
}

/** Whether the body carries any of the card arguments. */
export function hasCardFields(body: Record<string, unknown>): boolean {
  return cardFieldsOfContract().some((field) => body[field] !== undefined);
}

/**
 * The card the card arguments describe, refused with the catalogue's codes: a missing or failing
 * number 20000 (Luhn included), year 20001, month 20002 (in the past this year), holder 20008, cvv
 * 20003. The number and the cvv go no further than this function.
 */
export function cardFromFields(
  context: CardContext,
  body: Record<string, unknown>,
  options: { cvvRequired: boolean },
): StoredCard {
  const number = body.card_number as string | undefined;
  if (number === undefined || !passesLuhn(number)) throw new CardError(400, 20000);
  const year = body.expiration_year as string | undefined;
  const month = body.expiration_month as string | undefined;
  const nowYear = context.now.getUTCFullYear();
  if (year === undefined || Number(year) < nowYear || Number(year) > nowYear + 50)
    throw new CardError(400, 20001);
  if (
    month === undefined ||
    (Number(year) === nowYear && Number(month) < context.now.getUTCMonth() + 1)
  )
    throw new CardError(400, 20002);
  const holder = body.holder_name as string | undefined;
  if (holder === undefined) throw new CardError(400, 20008);
  if (options.cvvRequired && body.cvv === undefined) throw new CardError(400, 20003);
  return {
    ...factsOf(number),
    token: newId('crd'),
    expirationMonth: month,
    expirationYear: year,
    holderName: holder,
    created: context.now.toISOString(),
    seq: context.state.nextSeq(),
  };
}

export function tokenExpired(token: CardTokenRecord, now: Date): boolean {
  return now.getTime() - new Date(token.created).getTime() >= TOKEN_LIFETIME_MS;
}

/** A card token that may still be used: unknown 404 20005, used 400 20007, expired 400 20006. */
export function usableToken(context: CardContext, id: string): CardTokenRecord {
  const token = context.book.tokens.get(id);
  if (!token) throw unknownCardToken(context);
  if (token.used) throw new CardError(400, 20007, id);
  if (tokenExpired(token, context.now)) throw new CardError(400, 20006, id);
  return token;
}

/** Marks a token used, for good. */
export function consumeToken(context: CardContext, token: CardTokenRecord): void {
  token.used = true;
  context.state.put(context.book, 'token', token);
}

/** A customer that exists (404 30004 otherwise), active or not. */
export function knownCustomer(context: CardContext, id: string): CustomerRecord {
  const customer = context.book.customers.get(id);
  if (!customer) throw new CardError(404, 30004, id);
  return customer;
}

/** A customer that may still change (a deleted one is 404 30004 for every change). */
export function activeCustomer(context: CardContext, id: string): CustomerRecord {
  const customer = knownCustomer(context, id);
  if (!customer.active) throw new CardError(404, 30004, id);
  return customer;
}

/** The card a customer card operation names (400 30008 when the customer has no such card). */
export function cardOf(customer: CustomerRecord, cardId: string): StoredCard {
  const card = customer.cards.find((candidate) => candidate.token === cardId);
  if (!card) throw new CardError(400, 30008, cardId);
  return card;
}

/** At most this many cards per customer (card.yaml createCustomerCard). */
export const MAX_CUSTOMER_CARDS = 50;

/**
 * The card a customer or customer-card creation stores: exactly one of the card arguments (cvv not
 * needed) or an unused unexpired card token (marked used). Neither: 400 80002 token; both: 400 40001.
 */
export function cardForStoring(context: CardContext, body: Record<string, unknown>): StoredCard {
  const fields = hasCardFields(body);
  const tokenId = body.token as string | undefined;
  if (fields && tokenId !== undefined) throw new CardError(400, 40001);
  if (!fields && tokenId === undefined) throw new CardError(400, 80002, 'token');
  if (fields && context.book.merchant.type === '3dsecure') throw new CardError(400, 20016);
  if (fields) return cardFromFields(context, body, { cvvRequired: false });
  const token = usableToken(context, tokenId as string);
  consumeToken(context, token);
  return { ...token.card, token: newId('crd'), seq: context.state.nextSeq() };
}

/** Adds a card to a customer; `makeDefault` (or a customer without cards) makes it the default. */
export function addCustomerCard(
  context: CardContext,
  customer: CustomerRecord,
  card: StoredCard,
  makeDefault: boolean,
): StoredCard {
  if (customer.cards.length >= MAX_CUSTOMER_CARDS) throw new CardError(400, 80002, 'card_number');
  const stored = { ...card, customer: customer.token };
  customer.cards.push(stored);
  if (makeDefault || customer.cards.length === 1) customer.defaultCard = stored.token;
  customer.modified = context.now.toISOString();
  context.state.put(context.book, 'customer', customer);
  return stored;
}
