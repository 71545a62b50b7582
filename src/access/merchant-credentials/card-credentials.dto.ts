import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { IsOmittable } from '#src/platform/common/omittable.js';
import type { MaskedCredentials } from './card-credentials.service.js';

const keyPattern = (prefix: string) => `^${prefix}_[A-Za-z0-9_.-]{4,250}$`;
export const SECRET_KEY_PATTERN = keyPattern('sk');
export const PUBLIC_KEY_PATTERN = keyPattern('pk');
/** The POS interface's key (`p_`, pos.yaml). */
export const POS_KEY_PATTERN = keyPattern('p');

export class SetCardCredentialsRequest {
  @ApiProperty({
    description:
      "The merchant's secret key at the card provider (all operations). Stored encrypted.",
    pattern: SECRET_KEY_PATTERN,
    maxLength: 253,
    example: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
  })
  @IsString()
  @Matches(new RegExp(SECRET_KEY_PATTERN), {
    message: 'secretKey must be an sk_ key (letters, digits, _ . -)',
  })
  secretKey: string;

  @ApiProperty({
    description:
      "The merchant's public key (card tokens from browsers and apps). Stored encrypted.",
    pattern: PUBLIC_KEY_PATTERN,
    maxLength: 253,
    example: 'pk_live_TYooMQauvdEDq54NiTphI7jx',
  })
  @IsString()
  @Matches(new RegExp(PUBLIC_KEY_PATTERN), {
    message: 'publicKey must be a pk_ key (letters, digits, _ . -)',
  })
  publicKey: string;

  @ApiPropertyOptional({
    description:
      'The POS terminal interface key (`p_`), when the merchant has terminals. Stored encrypted.',
    pattern: POS_KEY_PATTERN,
    maxLength: 250,
  })
  @IsOmittable()
  @IsString()
  @Matches(new RegExp(POS_KEY_PATTERN), {
    message: 'posKey must be a p_ key (letters, digits, _ . -)',
  })
  posKey?: string;
}

const MASK = '^[a-z]*_?….{0,4}$';

export class CardCredentialsView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  tenantId: string;

  @ApiProperty({
    description: 'Masked: prefix and last four',
    example: 'sk_…7dc1',
    pattern: MASK,
    maxLength: 16,
  })
  secretKey: string;

  @ApiProperty({ example: 'pk_…I7jx', pattern: MASK, maxLength: 16, nullable: true, type: String })
  publicKey: string | null;

  @ApiProperty({ pattern: MASK, maxLength: 16, nullable: true, type: String, example: null })
  posKey: string | null;

  @ApiProperty({
    description:
      '`operator` (set through the API or the CLI) or `sandbox` (a sandbox merchant given at tenant creation)',
    enum: ['operator', 'sandbox'],
  })
  source: string;

  @ApiProperty({
    maxLength: 64,
    pattern: '^[A-Za-z0-9_-]*$',
    nullable: true,
    type: String,
    example: null,
  })
  merchantId: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  updatedAt: string;

  static of(view: MaskedCredentials): CardCredentialsView {
    return { ...view, updatedAt: view.updatedAt.toISOString() };
  }
}
