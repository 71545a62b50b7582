import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { CardBody, type CardForm } from '../common/card-body.pipe.js';
import {
  ApiCardProblems,
  CardId,
  CardQuery,
  type CardQueryOf,
  facade,
  CardRoute,
} from '../common/card-api.js';
import { CardPaymentsService } from './card-payments.service.js';

export const PAYMENT_EXAMPLE = {
  amount: 1099,
  cardNumber: '4111111111111111',
  expirationMonth: '12',
  expirationYear: '2030',
  holderName: 'Ada Lovelace',
  cvv: '123',
  description: 'Order 1042',
  metadata: { orderId: '1042' },
};

@ApiTags('Card payments')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/payments')
export class CardPaymentsController {
  constructor(private readonly payments: CardPaymentsService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Create a card payment',
    description:
      "Charges a card from exactly one source: card fields (`cardNumber`, `expirationMonth`, `expirationYear`, `holderName`, `cvv`), a card token (`token` ctn_…; one of a web-wallet tokenisation only once Portico verified it, and once) or a stored customer (`token` cus_…, optional `card`). `capture: 0` only pre-authorises (capture it later). Always carries a `merchantRef` (yours, or `portico-<id>` Portico makes): if the provider's answer is lost, Portico finds the payment by it, so a retry with the same Idempotency-Key never charges twice. Card numbers and CVVs are passed to the provider only: never stored or logged; the answer carries the masked card.",
    body: ['CreatePaymentForm', PAYMENT_EXAMPLE],
    answer: [201, 'Payment', 'The payment, `Captured` or `Pre Authorized`'],
    problems: {
      402: 'The card was declined (`upstream.code` 40004)',
      404: "An unknown card token, customer, mandate or branch (`upstream.code`), or another tenant's wallet card token",
      409: 'A duplicate merchantRef (`upstream.code` 40025), no merchant keys, or a wallet card token not verified by Portico or already charged',
    },
  })
  async createCardPayment(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreatePaymentForm')) form: CardForm<'CreatePaymentForm'>,
  ) {
    return facade('Payment', await this.payments.create(principal.tenantId, form));
  }

  @Get()
  @CardRoute({
    summary: 'List card payments',
    description: "The tenant's payments at the provider, most recent first (`count` 1-20).",
    query: 'listPayments',
    answer: [200, 'PaymentList', 'A page of payments'],
  })
  async listCardPayments(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listPayments')) query: CardQueryOf<'listPayments'>,
  ) {
    return facade('PaymentList', await this.payments.list(principal.tenantId, query));
  }

  @Get(':paymentId')
  @CardRoute({
    summary: 'Get a card payment',
    description:
      "By the provider's id (`pmt_…`), or by Portico's id of a payment whose creation is in doubt: 409 `urn:portico:problem:outcome-unknown` until Portico has settled it, then the payment, or 409 `urn:portico:problem:not-made` for good when the provider never made it.",
    id: ['paymentId', 'payment'],
    answer: [200, 'Payment', 'The payment'],
    problems: { 404: 'No such payment for this tenant' },
  })
  async getCardPayment(
    @CurrentPrincipal() principal: Principal,
    @Param('paymentId', CardId) paymentId: string,
  ) {
    return facade('Payment', await this.payments.get(principal.tenantId, paymentId));
  }

  @Put(':paymentId')
  @CardRoute({
    summary: 'Update a card payment',
    description:
      '`description` and `metadata`; omitted fields are unchanged, `metadata: {}` or `metadata: ""` removes all metadata.',
    id: ['paymentId', 'payment'],
    body: ['UpdatePaymentForm', { description: 'Order 1042 (gift)' }],
    answer: [200, 'Payment', 'The payment'],
    problems: { 404: 'No such payment for this tenant' },
  })
  async updateCardPayment(
    @CurrentPrincipal() principal: Principal,
    @Param('paymentId', CardId) paymentId: string,
    @Body(CardBody('UpdatePaymentForm')) form: CardForm<'UpdatePaymentForm'>,
  ) {
    return facade('Payment', await this.payments.update(principal.tenantId, paymentId, form));
  }

  @Post(':paymentId/capture')
  @HttpCode(200)
  @Idempotent()
  @CardRoute({
    summary: 'Capture a pre-authorised card payment',
    description:
      'A payment made with `capture: 0` (`Pre Authorized`) becomes `Captured`. With an Idempotency-Key it never runs twice.',
    id: ['paymentId', 'payment'],
    answer: [200, 'Payment', 'The payment, `Captured`'],
    problems: { 404: 'No such payment for this tenant' },
  })
  async captureCardPayment(
    @CurrentPrincipal() principal: Principal,
    @Param('paymentId', CardId) paymentId: string,
  ) {
    return facade('Payment', await this.payments.capture(principal.tenantId, paymentId));
  }
}
