import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsUUID } from 'class-validator';
import { PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';
import type { components } from '#src/generated/psd2.js';
import { PSD2, psd2Contract } from '#src/upstreams/open-banking/psd2-schemas.js';

export type PaymentProduct = components['parameters']['PaymentProduct'];
import { BRAND_ID_DOC, ScaReturnFields } from '#src/open-banking/consents/dto/consent.dto.js';
import type { Payment } from '../payment.entity.js';
import {
  SCA_APPROACHES,
  type ScaApproach,
} from '#src/open-banking/sca-sessions/sca-subject.columns.js';

/**
 * Every spelling the facade accepts: the contract's product names and aliases, and each name without
 * its trailing s (`sepa-credit-transfer`); Portico always sends the bank the canonical name.
 */
export const PAYMENT_PRODUCTS = [
  ...new Set(
    Object.entries(psd2Contract.productRules).flatMap(([name, rule]) => [
      name,
      name.replace(/s$/, ''),
      ...rule.aliases,
    ]),
  ),
];

/** The contract's name of a product the facade accepted (or stored). */
export function canonicalPaymentProduct(product: string): PaymentProduct {
  const canonical =
    psd2Contract.canonicalProduct(product) ?? psd2Contract.canonicalProduct(`${product}s`);
  if (!canonical) throw new Error(`not a payment product of the contract: ${product}`);
  return canonical as PaymentProduct;
}

export class PaymentParams {
  @ApiProperty({ description: "Portico's payment id", format: 'uuid', maxLength: 36 })
  @IsUUID(undefined, { message: 'paymentId must be a payment id (UUID) from Portico' })
  paymentId: string;
}

export class CreatePaymentRequest extends ScaReturnFields {
  @ApiProperty({
    description: 'The payment product (the spelling without the trailing s is accepted too)',
    enum: PAYMENT_PRODUCTS,
    example: 'domestic-credit-transfers',
  })
  @IsIn(PAYMENT_PRODUCTS, {
    message: `paymentProduct must be one of ${PAYMENT_PRODUCTS.join(', ')}`,
  })
  paymentProduct: string;

  @PSD2.field('PaymentDetails', {
    description:
      "The credit transfer, as the bank's PaymentDetails. Each product has its own rules (domestic: HUF or PLN; sepa: creditorAgent and creditorAddress with country; cross-border: creditorAgent and creditorAddress.country); they are checked here before the bank is called.",
    example: {
      instructedAmount: { currency: 'HUF', amount: '15000.00' },
      creditorName: 'Kovacs Peter',
      creditorAccount: { iban: 'HU42117730161111101800000000' },
      creditorType: 'INDIVIDUAL',
      remittanceInformationUnstructured: 'Rent November',
    },
  })
  payment: components['schemas']['PaymentDetails'];
}

export class PaymentLinks {
  @ApiPropertyOptional({
    description: "The bank's SCA page: send the user's browser here",
    format: 'uri',
    maxLength: 2000,
  })
  scaRedirect?: string;

  @ApiProperty({
    format: 'uri-reference',
    maxLength: 200,
    example: '/v1/payments/5b1f0e2d-3c4a-4d8e-9a51-6b1f0e2d3c4a',
  })
  self: string;
}

export class PaymentView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  paymentId: string;

  @ApiProperty({ ...BRAND_ID_DOC, example: 'danube-bank' })
  brandId: string;

  @ApiProperty({
    enum: Object.keys(psd2Contract.productRules),
    example: 'domestic-credit-transfers',
  })
  paymentProduct: string;

  @ApiProperty({
    description:
      "The bank's transactionStatus (ISO 20022), or Portico's creating / failed before it has one",
    maxLength: 8,
    pattern: '^[A-Za-z]{4,8}$',
    example: 'RCVD',
  })
  status: string;

  @ApiProperty({
    description:
      'The PaymentDetails sent to the bank (with the debtor account the user chose, once known)',
    allOf: [PSD2.ref('PaymentDetails')],
  })
  payment: Record<string, unknown>;

  @ApiPropertyOptional({
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
    nullable: true,
    type: String,
  })
  psuReference: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  createdAt: string;

  @ApiPropertyOptional({ format: 'date-time', maxLength: 40, nullable: true, type: String })
  lastScaAt: string | null;

  @ApiPropertyOptional({
    description:
      "How the bank has the user authorise, as the bank said when the payment was created (its ASPSP-SCA-Approach): REDIRECT means send the user's browser to _links.scaRedirect; null until the bank has answered",
    enum: SCA_APPROACHES,
    nullable: true,
    type: String,
    example: 'REDIRECT',
  })
  scaApproach: ScaApproach | null;

  @ApiProperty({ type: PaymentLinks })
  _links: PaymentLinks;

  static of(payment: Payment): PaymentView {
    return {
      paymentId: payment.id,
      brandId: payment.brandId,
      paymentProduct: payment.paymentProduct,
      status: payment.status,
      payment: payment.details,
      psuReference: payment.psuReference,
      createdAt: payment.createdAt.toISOString(),
      lastScaAt: payment.lastScaAt?.toISOString() ?? null,
      scaApproach: payment.scaApproach,
      _links: {
        self: `/v1/payments/${payment.id}`,
        ...(payment.status === 'RCVD' && payment.scaRedirect
          ? { scaRedirect: payment.scaRedirect }
          : {}),
      },
    };
  }
}

export class PaymentStatusView {
  @ApiProperty({ format: 'uuid', maxLength: 36 })
  paymentId: string;

  @ApiProperty({ maxLength: 8, pattern: '^[A-Za-z]{4,8}$', example: 'ACSC' })
  status: string;
}
