import { ApiProperty } from '@nestjs/swagger';
import { PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';

export const WALLET_TOKENIZATION_STATUSES = [
  'creating',
  'unknown',
  'failed',
  'pending',
  'verified',
  'rejected',
  'expired',
  'charged',
];

/** Portico's view of a web-wallet tokenisation it made for the app. */
export class WalletTokenizationView {
  @ApiProperty({ description: "Portico's id of the tokenisation", format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({
    description:
      'creating → verified (cryptogram flow: the provider’s signed card token checked) | pending (PAN-only: the payer has the form) → verified, or expired (the payer did not come back within 15 minutes); rejected (a signature that is not the provider’s: nothing chargeable); failed (refused by the provider); unknown (the answer was lost: start again); verified → charged (the card token paid once)',
    enum: WALLET_TOKENIZATION_STATUSES,
  })
  status: string;

  @ApiProperty({
    description: '`direct` (cryptogram) or `form` (PAN-only); null until the provider answered',
    enum: ['direct', 'form'],
    nullable: true,
    type: String,
  })
  flow: 'direct' | 'form' | null;

  @ApiProperty({
    description:
      'The card token (`ctn_…`), once Portico verified its signature: charge it once with `POST /v1/card/payments` (`token`, the same `amount`)',
    nullable: true,
    type: String,
    maxLength: 64,
    pattern: '^ctn_[A-Za-z0-9]+$',
  })
  cardToken: string | null;

  @ApiProperty({
    description:
      "PAN-only: the provider's form (HTML) for the app's page to insert; the payer submits it, completes 3-D Secure and comes back through Portico to `returnUrl`",
    nullable: true,
    type: String,
    maxLength: 65536,
    pattern: '^<form',
  })
  form: string | null;

  @ApiProperty({ minimum: 30, maximum: 99999999 })
  amount: number;

  @ApiProperty({ enum: ['EUR'] })
  currency: 'EUR';

  @ApiProperty({ maxLength: 255, pattern: PRINTABLE_TEXT_SOURCE })
  md: string;

  @ApiProperty({
    description: 'The card payment made from the card token (`pmt_…`), once made',
    nullable: true,
    type: String,
    maxLength: 64,
    pattern: '^pmt_[A-Za-z0-9]+$',
  })
  paymentId: string | null;

  @ApiProperty({ format: 'uri', maxLength: 2048, pattern: '^https?://' })
  returnUrl: string;
}
