import type { components } from '#src/generated/psd2.js';
import { PSD2 } from '#src/upstreams/open-banking/psd2-schemas.js';

type Schemas = components['schemas'];

export class FundsConfirmationRequest {
  @PSD2.field('AccountReference', {
    description: 'The account of the consent',
    example: { iban: 'HU80118000170000001234567824' },
  })
  account: Schemas['AccountReference'];

  @PSD2.field('Amount', {
    description: 'The amount to check, in the account currency',
    example: { currency: 'EUR', amount: '100.00' },
  })
  instructedAmount: Schemas['Amount'];
}
