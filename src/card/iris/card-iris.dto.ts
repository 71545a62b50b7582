import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsOmittable } from '#src/platform/common/omittable.js';
import { PRINTABLE_TEXT, PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';

export class CreateIrisSessionRequest {
  @ApiProperty({
    description: 'Cents, at least 30 (EUR)',
    minimum: 30,
    maximum: 99999999,
    example: 1500,
  })
  @IsInt()
  @Min(30)
  @Max(99999999)
  amount: number;

  @ApiProperty({
    description: "The payer's country, ISO 3166-1 alpha-2",
    pattern: '^[A-Z]{2}$',
    maxLength: 2,
    example: 'GR',
  })
  @IsString()
  @Matches(/^[A-Z]{2}$/, { message: 'country must be two capital letters (ISO 3166-1 alpha-2)' })
  country: string;

  @ApiProperty({
    description:
      "Where Portico sends the payer's browser after the bank, with `irisSession` and `status` (paid, pending, failed, cancelled) in the query",
    format: 'uri',
    maxLength: 2048,
    pattern: '^https?://',
    example: 'https://shop.example/checkout/done',
  })
  @IsString()
  @MaxLength(2048)
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'returnUrl must be an absolute http(s) URL' })
  returnUrl: string;

  @ApiPropertyOptional({
    description: 'Merchant data, returned with the result',
    maxLength: 255,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  @IsOmittable()
  @IsString()
  @MaxLength(255)
  @Matches(PRINTABLE_TEXT, { message: 'md must not contain control characters' })
  md?: string;

  @ApiPropertyOptional({
    description: "A unique id of the session at the provider (default the provider's)",
    maxLength: 64,
    pattern: '^[A-Za-z0-9-]+$',
  })
  @IsOmittable()
  @IsString()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { message: 'uuid must be 1 to 64 letters, digits or -' })
  uuid?: string;
}

const STATUSES = [
  'creating',
  'unknown',
  'failed',
  'created',
  'initiated',
  'authorized',
  'captured',
  'cancelled',
  'expired',
];

/** Portico's view of an IRIS session it made for the app. */
export class IrisSessionView {
  @ApiProperty({ description: "Portico's id of the session", format: 'uuid', maxLength: 36 })
  id: string;

  @ApiProperty({
    description: "The provider's source id (`src_…`); null while the creation is in doubt",
    nullable: true,
    type: String,
    maxLength: 64,
    pattern: '^src_[A-Za-z0-9]+$',
  })
  token: string | null;

  @ApiProperty({
    description:
      'created → initiated (payment form opened) → authorized (approved at the bank) → captured (the payment is made); or failed, cancelled, expired',
    enum: STATUSES,
  })
  status: string;

  @ApiProperty({ minimum: 30, maximum: 99999999 })
  amount: number;

  @ApiProperty({ enum: ['EUR'] })
  currency: 'EUR';

  @ApiProperty({ maxLength: 255, pattern: PRINTABLE_TEXT_SOURCE })
  md: string;

  @ApiProperty({
    description: 'The card payment made from the source (`pmt_…`), once made',
    nullable: true,
    type: String,
    maxLength: 64,
    pattern: '^pmt_[A-Za-z0-9]+$',
  })
  paymentId: string | null;

  @ApiProperty({ format: 'uri', maxLength: 2048, pattern: '^https?://' })
  returnUrl: string;

  @ApiProperty({
    description:
      "When the session expires unless approved at the bank (the provider's lifetime, 15 minutes); then `expired`, and its payment form 410 `urn:portico:problem:iris-session-expired`. Null while the creation is in doubt",
    nullable: true,
    type: String,
    format: 'date-time',
    maxLength: 40,
  })
  expiresAt: string | null;
}

export class IrisPayformView {
  @ApiProperty({
    description:
      "The provider's payment form: an HTML form the app's page inserts and the payer submits to reach the bank",
    maxLength: 65536,
    pattern: '^<form',
  })
  payload: string;
}

export class IrisResultReceived {
  @ApiProperty({ enum: ['paid', 'pending', 'failed', 'cancelled'] })
  status: string;
}
