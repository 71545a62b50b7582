import { createHash } from 'node:crypto';
import type { components } from '#src/generated/card.js';

type Schemas = components['schemas'];

/** The card Portico sent with a customer, as the provider's card object answers it unchanged. */
export interface SentCard {
  lastFour: string;
  expirationMonth: string;
  expirationYear: string;
}

/**
 * The fingerprint of a customer's fields, kept with its row before the provider is called: the
 * provider takes no reference of ours on a customer, so a lost creation is found among the provider's
 * customers by these (the e-mail without case). A card sent as a `ctn_` token is known only to the
 * provider: its fingerprint leaves the card out.
 */
export function customerFingerprint(
  fields: { description?: string | null; full_name?: string | null; email?: string | null },
  card?: SentCard,
): string {
  const text = JSON.stringify([
    fields.description?.trim() ?? null,
    fields.full_name?.trim() ?? null,
    fields.email?.trim().toLowerCase() ?? null,
    card ? [card.lastFour, Number(card.expirationMonth), Number(card.expirationYear)] : null,
  ]);
  return createHash('sha256').update(`customer:${text}`, 'utf8').digest('base64url');
}

/** The fingerprint of what Portico sends in createCustomer. */
export function sentCustomerFingerprint(form: Schemas['CreateCustomerForm']): string {
  const card = form.card_number
    ? {
        lastFour: form.card_number.slice(-4),
        expirationMonth: form.expiration_month ?? '',
        expirationYear: form.expiration_year ?? '',
      }
    : undefined;
  return customerFingerprint(form, card);
}

/** Whether a listed customer carries a fingerprint: its first card, or no card (sent as a token). */
export function customerMatches(customer: Schemas['Customer'], fingerprint: string): boolean {
  const first = customer.cards.data.at(-1) ?? customer.card;
  const card = {
    lastFour: first.last_four,
    expirationMonth: String(first.expiration_month),
    expirationYear: String(first.expiration_year),
  };
  return (
    customerFingerprint(customer, card) === fingerprint ||
    customerFingerprint(customer) === fingerprint
  );
}
