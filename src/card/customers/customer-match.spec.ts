import { describe, expect, it } from '@jest/globals';
import type { components } from '#src/generated/card.js';
import { customerMatches, sentCustomerFingerprint } from './customer-match.js';

type Customer = components['schemas']['Customer'];
type Card = components['schemas']['Card'];

const card = (lastFour: string, month = '12', year = '2031') =>
  ({ last_four: lastFour, expiration_month: month, expiration_year: year }) as Card;
const listed = (fields: Partial<Customer>, ...cards: Card[]) =>
  ({
    description: 'Loyalty member',
    full_name: 'Nikos Papadopoulos',
    email: 'nikos@example.com',
    card: cards[0],
    cards: { count: cards.length, data: cards },
    ...fields,
  }) as Customer;
const sent = {
  card_number: '5217925525906273',
  expiration_month: '12',
  expiration_year: '2031',
  description: ' Loyalty member',
  full_name: 'Nikos Papadopoulos',
  email: 'Nikos@Example.com',
};

describe('a lost customer recognised among the provider’s by what Portico sent', () => {
  const sut = sentCustomerFingerprint(sent);

  it('matches the same names (e-mail without case) and the card sent, its first card', () => {
    expect(customerMatches(listed({}, card('6273')), sut)).toBe(true);
    // Cards added later come first in the provider's list: the one made with it is the oldest.
    expect(customerMatches(listed({}, card('1111'), card('6273')), sut)).toBe(true);
  });

  it('refuses another card, another expiry, another name', () => {
    expect(customerMatches(listed({}, card('1111')), sut)).toBe(false);
    expect(customerMatches(listed({}, card('6273', '11')), sut)).toBe(false);
    expect(customerMatches(listed({ full_name: 'Nikos P.' }, card('6273')), sut)).toBe(false);
    expect(customerMatches(listed({ description: null }, card('6273')), sut)).toBe(false);
  });

  it('matches any card when the card went as a token (only the provider knows it)', () => {
    const { card_number: _, ...names } = sent;
    const byToken = sentCustomerFingerprint({ ...names, token: 'ctn_abc' });
    expect(customerMatches(listed({}, card('1111')), byToken)).toBe(true);
    expect(customerMatches(listed({ email: 'other@example.com' }, card('1111')), byToken)).toBe(
      false,
    );
  });
});
