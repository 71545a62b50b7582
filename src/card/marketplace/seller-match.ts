import { createHash } from 'node:crypto';
import type { components } from '#src/generated/card.js';

type Schemas = components['schemas'];

/**
 * The fingerprint of a seller's identity, kept with its row before the provider is called: the provider
 * takes no reference of ours on a seller, so a lost creation is found among its sellers by these (the
 * e-mail without case, the tax number, the IBAN without spaces or case). Not the descriptive fields: an
 * update may change them before the resolver looks.
 */
export function sellerFingerprint(fields: {
  email: string;
  taxNumber: string;
  iban: string | undefined;
}): string {
  const text = JSON.stringify([
    fields.email.trim().toLowerCase(),
    fields.taxNumber.trim(),
    (fields.iban ?? '').replace(/\s+/g, '').toUpperCase(),
  ]);
  return createHash('sha256').update(`seller:${text}`, 'utf8').digest('base64url');
}

/** The fingerprint of what Portico sends in createSeller. */
export function sentSellerFingerprint(form: Schemas['CreateSellerForm']): string {
  return sellerFingerprint({
    email: form.email,
    taxNumber: form.business_tax_number,
    iban: form.bank_account_iban,
  });
}

/** Whether a listed seller carries a fingerprint: its first (oldest) bank account is the one sent. */
export function sellerMatches(seller: Schemas['Seller'], fingerprint: string): boolean {
  return (
    sellerFingerprint({
      email: seller.email,
      taxNumber: seller.business.tax_number,
      iban: seller.bank_accounts[0]?.iban,
    }) === fingerprint
  );
}
