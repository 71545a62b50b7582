import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import {
  CreatePaymentRequest,
  PaymentParams,
  PaymentStatusView,
  PaymentView,
} from './dto/payment.dto.js';
import { PaymentsService } from './payments.service.js';
import { ApiCreatedWithLocation, withLocation } from '../created-location.js';

@ApiTags('Payment initiation')
@ApiStandardProblems()
@ApiProblems(UPSTREAM_PROBLEMS)
@Auth('app')
@Controller('v1/payments')
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @Post()
  @ApiOperation({
    summary: 'Initiate a payment',
    description:
      "Checks the product's rules, stores the payment, asks the bank and returns `_links.scaRedirect` for the user. After the bank the browser comes back through Portico to `redirectUri` with `paymentId` and `status`.",
  })
  @Idempotent()
  @ApiCreatedWithLocation(PaymentView, 'payment')
  async initiatePayment(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreatePaymentRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PaymentView> {
    return withLocation(
      reply,
      PaymentView.of(await this.payments.initiate(principal.tenantId, body.paymentProduct, body)),
    );
  }

  @Get(':paymentId')
  @ApiOperation({
    summary: 'Get a payment',
    description: 'With its status brought up to date from the bank.',
  })
  @ApiOkResponse({ type: PaymentView })
  @ApiProblems({ 404: 'No such payment for this tenant' })
  async getPayment(
    @CurrentPrincipal() principal: Principal,
    @Param() params: PaymentParams,
  ): Promise<PaymentView> {
    return PaymentView.of(
      await this.payments.refresh(
        await this.payments.find(principal.tenantId, params.paymentId),
        'getPayment',
      ),
    );
  }

  @Get(':paymentId/status')
  @ApiOperation({
    summary: "Get a payment's status",
    description:
      'The transactionStatus, brought up to date from the bank while it can still change.',
  })
  @ApiOkResponse({ type: PaymentStatusView })
  @ApiProblems({ 404: 'No such payment for this tenant' })
  async getPaymentStatus(
    @CurrentPrincipal() principal: Principal,
    @Param() params: PaymentParams,
  ): Promise<PaymentStatusView> {
    const payment = await this.payments.refresh(
      await this.payments.find(principal.tenantId, params.paymentId),
      'getPaymentStatus',
    );
    return { paymentId: payment.id, status: payment.status };
  }
}
