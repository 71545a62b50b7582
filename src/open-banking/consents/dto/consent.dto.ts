import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, IsUUID, Length, Matches } from 'class-validator';
import { IsOmittable } from '#src/platform/common/omittable.js';
import { PRINTABLE_TEXT, PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';
import { AppRedirectUri } from '#src/open-banking/redirect-uri.decorator.js';
import type { components } from '#src/generated/psd2.js';
import { PSD2 } from '#src/upstreams/open-banking/psd2-schemas.js';

type Psd2Schemas = components['schemas'];
import {
  appliedFrequencyPerDay,
  CONSENT_STATUSES,
  type Consent,
  type ConsentStatus,
  scaRenewalDueAt,
} from '../consent.entity.js';
import {
  SCA_APPROACHES,
  type ScaApproach,
} from '#src/open-banking/sca-sessions/sca-subject.columns.js';

/** How a brandId is documented wherever the facade shows one: the provider's BrandIdentifier schema. */
export const BRAND_ID_DOC = (({ pattern, maxLength, minLength }) => ({
  pattern,
  maxLength,
  minLength,
}))(PSD2.resolve('BrandIdentifier') as { pattern: string; maxLength: number; minLength: number });

/** Fields every consent and payment creation shares: where the bank is, and where the user returns to. */
export class ScaReturnFields {
  @PSD2.field('BrandIdentifier', {
    description: 'The bank, a brandId from GET /v1/brands',
    example: 'danube-bank',
  })
  brandId: string;

  @AppRedirectUri({
    required: true,
    description:
      "Where Portico sends the user's browser after the bank, with the outcome in the query string",
    example: 'https://app.example.com/banking/return',
  })
  redirectUri: string;

  @AppRedirectUri({
    required: false,
    description:
      'Where to send the browser when the user denied or the bank refused (default redirectUri)',
    example: 'https://app.example.com/banking/failed',
  })
  nokRedirectUri?: string;

  @ApiPropertyOptional({
    description: "The app's own reference for the user (kept for audit, never sent to the bank)",
    example: 'customer-4711',
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  @Matches(PRINTABLE_TEXT, { message: 'psuReference must not contain control characters' })
  psuReference?: string;
}

export class CreateConsentRequest extends ScaReturnFields {
  @PSD2.field('AccountAccess', {
    description:
      'What the app may read. Name accounts by IBAN, or leave the lists empty for a bank-offered consent (the user chooses the accounts at the bank).',
    example: {
      accounts: [{ iban: 'HU75118000170000001234567817' }],
      balances: [{ iban: 'HU75118000170000001234567817' }],
      transactions: [{ iban: 'HU75118000170000001234567817' }],
    },
  })
  access: Psd2Schemas['AccountAccess'];

  @PSD2.field('ConsentRequest/properties/recurringIndicator', {
    description: 'true for recurring access, false for one-off',
    example: true,
  })
  recurringIndicator: boolean;

  @PSD2.field('ConsentRequest/properties/validUntil', {
    description: 'Last day (inclusive, UTC) the consent is valid; not in the past',
    example: '2027-02-28',
  })
  validUntil: string;

  @PSD2.field('ConsentRequest/properties/frequencyPerDay', {
    description: 'Unattended reads (without PSU-IP-Address) allowed per day; default 4',
    example: 4,
    required: false,
  })
  @IsOmittable()
  frequencyPerDay?: number;

  @ApiPropertyOptional({
    description:
      'Renew this account-information consent of the same app (before its SCA is due again, or after it expired): the new consent is linked to it, and once the user has authorised the new one Portico terminates the old one at the bank',
    format: 'uuid',
    maxLength: 36,
  })
  @IsOmittable()
  @IsUUID()
  renewsConsentId?: string;
}

export class CreateCofConsentRequest extends ScaReturnFields {
  @PSD2.field('AccountReference', {
    description: 'The account whose funds may be checked',
    example: { iban: 'HU80118000170000001234567824' },
  })
  account: Psd2Schemas['AccountReference'];
}

/** ais consents carry an AccountAccess, cof consents one account. */
const ACCESS_SHAPES = [
  PSD2.ref('AccountAccess'),
  { type: 'object', required: ['account'], properties: { account: PSD2.ref('AccountReference') } },
];

export class ConsentLinks {
  @ApiPropertyOptional({
    description: "The bank's SCA page: send the user's browser here to approve or deny",
    format: 'uri',
    maxLength: 2000,
    example:
      'http://localhost:8081/sca/danube-bank/authorisations/2b7c9e4e-8f0a-4d8e-9a51-6b1f0e2d3c4a',
  })
  scaRedirect?: string;

  @ApiProperty({
    description: 'This consent in Portico',
    format: 'uri-reference',
    maxLength: 200,
    example: '/v1/consents/7d3e0a52-5b7a-4e0c-9d55-1a2b3c4d5e6f',
  })
  self: string;
}

export class ConsentAccountView {
  @ApiProperty({
    description: "The bank's account id: pass it as accountId",
    maxLength: 128,
    pattern: PRINTABLE_TEXT_SOURCE,
    example: 'acc-9f2c41',
  })
  resourceId: string;

  @ApiProperty({
    maxLength: 34,
    pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$',
    example: 'HU75118000170000001234567817',
  })
  iban: string;

  @ApiProperty({ maxLength: 3, pattern: '^[A-Z]{3}$', example: 'HUF' })
  currency: string;
}

export class ConsentView {
  @ApiProperty({
    description: "Portico's id of the consent; send it as Consent-ID",
    format: 'uuid',
    maxLength: 36,
    example: '7d3e0a52-5b7a-4e0c-9d55-1a2b3c4d5e6f',
  })
  consentId: string;

  @ApiProperty({
    description: 'ais: account information; cof: confirmation of funds',
    enum: ['ais', 'cof'],
    example: 'ais',
  })
  kind: 'ais' | 'cof';

  @ApiProperty({ ...BRAND_ID_DOC, example: 'danube-bank' })
  brandId: string;

  @ApiProperty({
    description:
      "creating, unknown and failed are Portico states before the bank has one (unknown: its answer was lost); forgottenByBank means the bank no longer knows the consent (final: create a new one); the rest are the bank's consentStatus",
    enum: CONSENT_STATUSES,
    example: 'received',
  })
  status: ConsentStatus;

  @ApiProperty({
    description: 'What the app asked for (ais: AccountAccess; cof: { account })',
    oneOf: ACCESS_SHAPES,
    example: { accounts: [{ iban: 'HU75118000170000001234567817' }] },
  })
  requestedAccess: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'What the bank granted, once the user approved',
    oneOf: ACCESS_SHAPES,
    nullable: true,
  })
  grantedAccess: Record<string, unknown> | null;

  @ApiProperty({
    description: 'The accounts the consent covers, once valid',
    type: [ConsentAccountView],
    maxItems: 100,
  })
  accounts: ConsentAccountView[];

  @ApiPropertyOptional({ type: Boolean, nullable: true, example: true })
  recurringIndicator: boolean | null;

  @ApiPropertyOptional({
    description: 'As the bank returned it (inclusive)',
    format: 'date',
    maxLength: 10,
    nullable: true,
    type: String,
    example: '2027-02-28',
  })
  validUntil: string | null;

  @ApiPropertyOptional({
    description:
      'Reads without the user a day this consent allows: the value asked for, or 4 when none was (account information only)',
    format: 'int32',
    minimum: 1,
    maximum: 100,
    nullable: true,
    type: Number,
    example: 4,
  })
  frequencyPerDay: number | null;

  @ApiPropertyOptional({
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
    example: 'customer-4711',
  })
  psuReference: string | null;

  @ApiProperty({
    format: 'uri',
    maxLength: 2000,
    example: 'https://app.example.com/banking/return',
  })
  redirectUri: string;

  @ApiPropertyOptional({
    format: 'uri',
    maxLength: 2000,
    nullable: true,
    type: String,
    example: null,
  })
  nokRedirectUri: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40, example: '2026-11-20T10:00:00.000Z' })
  createdAt: string;

  @ApiPropertyOptional({
    description: 'When the user last came back from the bank',
    format: 'date-time',
    maxLength: 40,
    nullable: true,
    type: String,
    example: null,
  })
  lastScaAt: string | null;

  @ApiPropertyOptional({
    description:
      "How the bank has the user authorise, as the bank said when the consent was created (its ASPSP-SCA-Approach): REDIRECT means send the user's browser to _links.scaRedirect; null until the bank has answered",
    enum: SCA_APPROACHES,
    nullable: true,
    type: String,
    example: 'REDIRECT',
  })
  scaApproach: ScaApproach | null;

  @ApiPropertyOptional({
    description:
      'Account information only: when the user must authenticate again (RTS Art. 10a: 180 days after the last SCA) for unattended reads to go on; renew by creating a consent with renewsConsentId. Null before the first SCA and for confirmation-of-funds consents',
    format: 'date-time',
    maxLength: 40,
    nullable: true,
    type: String,
    example: '2027-05-22T10:00:00.000Z',
  })
  scaRenewalDueAt: string | null;

  @ApiPropertyOptional({
    description:
      'The consent this one renews: once this one is valid, Portico terminates that one at the bank',
    format: 'uuid',
    maxLength: 36,
    nullable: true,
    type: String,
    example: null,
  })
  renewsConsentId: string | null;

  @ApiProperty({ type: ConsentLinks })
  _links: ConsentLinks;

  static of(consent: Consent): ConsentView {
    const base = consent.kind === 'ais' ? '/v1/consents' : '/v1/funds-confirmation-consents';
    return {
      consentId: consent.id,
      kind: consent.kind,
      brandId: consent.brandId,
      status: consent.status,
      requestedAccess: consent.requestedAccess,
      grantedAccess: consent.grantedAccess,
      accounts: consent.accounts,
      recurringIndicator: consent.recurringIndicator,
      validUntil: consent.validUntil,
      frequencyPerDay: appliedFrequencyPerDay(consent),
      psuReference: consent.psuReference,
      redirectUri: consent.redirectUri,
      nokRedirectUri: consent.nokRedirectUri,
      createdAt: consent.createdAt.toISOString(),
      lastScaAt: consent.lastScaAt?.toISOString() ?? null,
      scaApproach: consent.scaApproach,
      scaRenewalDueAt: scaRenewalDueAt(consent)?.toISOString() ?? null,
      renewsConsentId: consent.renewsConsentId,
      _links: {
        self: `${base}/${consent.id}`,
        ...(consent.status === 'received' && consent.scaRedirect
          ? { scaRedirect: consent.scaRedirect }
          : {}),
      },
    };
  }
}

export class ConsentStatusView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  consentId: string;

  @ApiProperty({ enum: CONSENT_STATUSES, example: 'valid' })
  status: ConsentStatus;
}
