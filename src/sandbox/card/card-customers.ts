import {
  CardError,
  invalid,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from './card-context.js';
import {
  activeCustomer,
  addCustomerCard,
  cardForStoring,
  cardFromFields,
  cardOf,
  hasCardFields,
  knownCustomer,
  tokenExpired,
} from './card-sources.js';
import { unknownCardToken } from './answer-style.js';
import { isTdsMerchant } from './tds/tds-authentications.js';
import type { CardTokenRecord, CustomerRecord } from './card-state.js';
import {
  branchView,
  cardView,
  customerView,
  deletedCustomerView,
  mandateView,
  tokenView,
} from './card-views.js';

// ---- card tokens

export function createCardToken(context: CardContext, request: CardRequest): CardAnswer {
  // A 3-D Secure merchant's cards are tokenised only through 3-D Secure (POST /tokens/3dsecure).
  if (isTdsMerchant(context)) throw new CardError(400, 20013);
  const card = cardFromFields(context, request.body, { cvvRequired: true });
  const token: CardTokenRecord = {
    token: newId('ctn'),
    merchantId: context.book.merchant.id,
    seq: card.seq,
    created: context.now.toISOString(),
    ...(request.body.amount !== undefined ? { amount: request.body.amount as number } : {}),
    used: false,
    card,
  };
  context.state.put(context.book, 'token', token);
  return ok(tokenView(token, false, context.now));
}

export function retrieveCardToken(context: CardContext, request: CardRequest): CardAnswer {
  const token = context.book.tokens.get(request.params.tokenId);
  if (!token) throw unknownCardToken(context);
  return ok(tokenView(token, tokenExpired(token, context.now), context.now));
}

// ---- customers

const text = (value: unknown) => value as string | undefined;

export function createCustomer(context: CardContext, request: CardRequest): CardAnswer {
  const { body } = request;
  // No card at all: the card checks' first refusal, as the clients' fixtures expect (20001).
  if (body.token === undefined && !hasCardFields(body)) throw new CardError(400, 20001);
  const card = cardForStoring(context, body);
  const created = context.now.toISOString();
  const customer: CustomerRecord = {
    token: newId('cus'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created,
    modified: created,
    description: text(body.description) ?? null,
    fullName: text(body.full_name) ?? null,
    email: text(body.email) ?? null,
    active: true,
    cards: [],
    defaultCard: '',
  };
  addCustomerCard(context, customer, card, true);
  return ok(customerView(customer, context.now));
}

export function retrieveCustomer(context: CardContext, request: CardRequest): CardAnswer {
  return ok(customerView(knownCustomer(context, request.params.customerId), context.now));
}

/**
 * Changes a customer; a card token or card arguments add a card (the clients' way of adding one,
 * `default_card=1` making it the default), `card` with `default_card=1` makes that card the default.
 */
export function updateCustomer(context: CardContext, request: CardRequest): CardAnswer {
  const customer = activeCustomer(context, request.params.customerId);
  const { body } = request;
  const cardId = text(body.card);
  const adding = body.token !== undefined || hasCardFields(body);
  if (adding && cardId !== undefined) throw invalid('card');
  if (body.default_card === 1 && cardId === undefined && !adding) throw invalid('card');
  const card = cardId === undefined ? undefined : cardOf(customer, cardId);
  const added = adding ? cardForStoring(context, body) : undefined;
  if (body.description !== undefined) customer.description = text(body.description) ?? null;
  if (body.full_name !== undefined) customer.fullName = text(body.full_name) ?? null;
  if (body.email !== undefined) customer.email = text(body.email) ?? null;
  if (added) addCustomerCard(context, customer, added, body.default_card === 1);
  if (card && body.default_card === 1) customer.defaultCard = card.token;
  customer.modified = context.now.toISOString();
  context.state.put(context.book, 'customer', customer);
  return ok(customerView(customer, context.now));
}

export function deleteCustomer(context: CardContext, request: CardRequest): CardAnswer {
  const customer = activeCustomer(context, request.params.customerId);
  customer.active = false;
  customer.modified = context.now.toISOString();
  context.state.put(context.book, 'customer', customer);
  return ok(deletedCustomerView(customer));
}

export function listCustomers(context: CardContext, request: CardRequest): CardAnswer {
  return page(context.book.customers.values(), request.query, (customer) =>
    customerView(customer, context.now),
  );
}

// ---- cards of a customer

export function createCustomerCard(context: CardContext, request: CardRequest): CardAnswer {
  const customer = activeCustomer(context, request.params.customerId);
  const card = cardForStoring(context, request.body);
  const stored = addCustomerCard(context, customer, card, request.body.default_card === 1);
  return ok(cardView(stored, context.now));
}

export function listCustomerCards(context: CardContext, request: CardRequest): CardAnswer {
  const customer = knownCustomer(context, request.params.customerId);
  return page(customer.cards, request.query, (card) => cardView(card, context.now));
}

export function retrieveCustomerCard(context: CardContext, request: CardRequest): CardAnswer {
  const customer = knownCustomer(context, request.params.customerId);
  return ok(cardView(cardOf(customer, request.params.cardId), context.now));
}

/** Deleting the default card makes the most recently added remaining card the default; never the last. */
export function deleteCustomerCard(context: CardContext, request: CardRequest): CardAnswer {
  const customer = activeCustomer(context, request.params.customerId);
  const card = cardOf(customer, request.params.cardId);
  if (customer.cards.length === 1) throw new CardError(400, 30010);
  customer.cards = customer.cards.filter((candidate) => candidate.token !== card.token);
  if (customer.defaultCard === card.token)
    customer.defaultCard = customer.cards.reduce((latest, candidate) =>
      candidate.seq > latest.seq ? candidate : latest,
    ).token;
  customer.modified = context.now.toISOString();
  context.state.put(context.book, 'customer', customer);
  return ok({ token: card.token, is_deleted: true });
}

/** The clients' path answers the customer left (provider facts); the seed's path keeps its answer. */
export function deleteCustomerCardAlias(context: CardContext, request: CardRequest): CardAnswer {
  deleteCustomerCard(context, request);
  return ok(customerView(activeCustomer(context, request.params.customerId), context.now));
}

// ---- mandates of a customer

export function listCustomerMandates(context: CardContext, request: CardRequest): CardAnswer {
  const customer = knownCustomer(context, request.params.customerId);
  const { query } = request;
  const status = query.status === 'completed' ? 'valid' : (query.status as string | undefined);
  const reference = query.mandate_reference as string | undefined;
  const mandates = [...context.book.mandates.values()].filter(
    (mandate) =>
      mandate.customer === customer.token &&
      (status === undefined || mandate.status === status) &&
      (reference === undefined || mandate.reference === reference),
  );
  return page(mandates, query, (mandate) => mandateView(mandate, context.now));
}

export function deleteMandate(context: CardContext, request: CardRequest): CardAnswer {
  const customer = knownCustomer(context, request.params.customerId);
  const mandate = context.book.mandates.get(request.params.mandateId);
  if (!mandate || mandate.customer !== customer.token) throw new CardError(404, 10002);
  mandate.status = 'revoked';
  context.state.put(context.book, 'mandate', mandate);
  return ok(mandateView(mandate, context.now));
}

// ---- branches

export function listBranches(context: CardContext, request: CardRequest): CardAnswer {
  return page(context.book.branches.values(), request.query, branchView);
}
