import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { components } from '#src/generated/psd2.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import type { LedgerTable } from '#src/provider-ledger/ledger-table.js';
import { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { requestIdHeader } from '#src/upstreams/http/upstream-transport.js';
import {
  OpenBankingClient,
  scaRedirectHeaders,
} from '#src/upstreams/open-banking/open-banking.client.js';
import { psd2Contract } from '#src/upstreams/open-banking/psd2-schemas.js';
import { createdAtBank, refusedCause } from '../bank-creation.js';
import { ScaSessionsService } from '../sca-sessions/sca-sessions.service.js';
import { newScaSubject, scaApproachOf } from '../sca-sessions/sca-subject.columns.js';
import { canonicalPaymentProduct, type CreatePaymentRequest } from './dto/payment.dto.js';
import { Payment } from './payment.entity.js';
import { PaymentsRepository } from './payments.repository.js';

/** Statuses after which the bank will not change its mind. */
const FINAL = ['ACCC', 'ACSC', 'ACWP', 'RJCT', 'CANC', 'failed'];
export const REFUSED_PAYMENT_STATUSES = ['RJCT', 'CANC', 'failed'];

/** Payments in the provider-resource ledger: a table of their own, whose rich columns auditors read. */
export const PAYMENTS: LedgerTable<Payment> = {
  entity: Payment,
  name: 'payments',
  subjectKind: () => 'payment',
  accessSubject: (payment) => ({ paymentId: payment.id }),
};

/** Payment initiation: validated against the product's rules, stored before and after the bank, with status history. */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly payments: PaymentsRepository,
    private readonly ledger: ProviderLedger,
    private readonly sca: ScaSessionsService,
    private readonly bank: OpenBankingClient,
    private readonly accessLog: AccessLogService,
  ) {}

  async initiate(
    tenantId: string,
    product: string,
    request: CreatePaymentRequest,
  ): Promise<Payment> {
    const canonical = canonicalPaymentProduct(product);
    const rule = psd2Contract.productRules[canonical];
    // The product's own schema (from psd2.yaml's x-portico-product-rules) on top of the generic PaymentDetails.
    const problems = rule.schema ? psd2Contract.validate(rule.schema, request.payment, '') : [];
    if (problems.length)
      throw new ValidationFailedException(
        problems.map((p) => ({ field: `payment${p.path}`, reason: `${p.message} (${canonical})` })),
      );

    const payment = this.payments.build({
      id: randomUUID(),
      tenantId,
      brandId: request.brandId,
      paymentProduct: canonical,
      upstreamPaymentId: null,
      details: request.payment,
      status: 'creating',
      ...newScaSubject(request),
    });
    await this.ledger.begin(PAYMENTS, payment);
    const callback = await this.sca.open(this.subject(payment));
    await this.ledger.create(PAYMENTS, payment, {
      resource: `/v1/payments/${payment.id}`,
      names: (row) => ({ paymentId: row.id, paymentStatus: row.status }),
      send: () =>
        createdAtBank(
          this.bank,
          'initiatePayment',
          payment.brandId,
          (api) =>
            api.POST('/{brandId}/bg/v1/payments/{paymentProduct}', {
              params: {
                path: { brandId: payment.brandId, paymentProduct: canonical },
                header: scaRedirectHeaders(callback),
              },
              body: request.payment,
            }),
          (send) => this.ledger.call(this.accessSubject(payment, 'initiatePayment'), send),
        ),
      settle: (created) => this.completeCreation(payment, created.data, created.headers),
      refusedCause,
    });
    return payment;
  }

  async find(tenantId: string, paymentId: string): Promise<Payment> {
    const payment = await this.payments.findOfTenant(tenantId, paymentId);
    if (!payment)
      throw new ProblemException({
        status: 404,
        type: PROBLEM_TYPES.notFound,
        title: 'Not Found',
        detail: `No payment ${paymentId}`,
        extensions: { code: 'RESOURCE_UNKNOWN' },
      });
    return payment;
  }

  /** Brings the status up to date from the bank while it can still change; every read is logged. */
  async refresh(payment: Payment, operation: string, cause = 'upstream-status'): Promise<Payment> {
    if (FINAL.includes(payment.status) || !payment.upstreamPaymentId) {
      await this.accessLog.record(this.accessSubject(payment, operation), {
        outcome: 'ok:stored-final',
        latencyMs: 0,
      });
      return payment;
    }
    const path = {
      brandId: payment.brandId,
      paymentProduct: canonicalPaymentProduct(payment.paymentProduct),
      paymentId: payment.upstreamPaymentId,
    };
    const answer = await this.ledger.call(this.accessSubject(payment, operation), () =>
      this.bank.call('getPayment', payment.brandId, (api) =>
        api.GET('/{brandId}/bg/v1/payments/{paymentProduct}/{paymentId}', {
          params: { path, header: requestIdHeader() },
        }),
      ),
    );
    if (answer.status >= 400 || !answer.data) throw this.bank.refusal('getPayment', answer);
    const data = answer.data;
    const { debtorAccount } = data.paymentDetails;
    if (debtorAccount && !payment.details.debtorAccount) {
      payment.details = { ...payment.details, debtorAccount };
      await this.payments.update(payment.id, { details: payment.details });
    }
    if (data.transactionStatus !== payment.status)
      await this.transition(payment, data.transactionStatus, cause);
    return payment;
  }

  async completeSca(payment: Payment): Promise<Payment> {
    payment.lastScaAt = new Date();
    await this.payments.update(payment.id, { lastScaAt: payment.lastScaAt });
    return this.refresh(payment, 'scaCallback', 'sca-callback');
  }

  /** Settles a payment in doubt with the bank (the ledger leases it; see ConsentsService). */
  async settleInDoubt(payment: Payment, giveUpAfterMs: number): Promise<void> {
    if (payment.upstreamPaymentId) {
      await this.refresh(payment, 'resolver', 'resolver').catch(() => undefined);
      return;
    }
    if (Date.now() - payment.createdAt.getTime() > giveUpAfterMs)
      await this.transition(payment, 'failed', 'resolver:lifetime-passed');
    else if (payment.status === 'creating')
      await this.transition(payment, 'unknown', 'resolver:answer-never-recorded');
  }

  private subject(payment: Payment) {
    return { kind: 'payment' as const, id: payment.id, tenantId: payment.tenantId };
  }

  private transition(payment: Payment, to: string, cause: string): Promise<boolean> {
    return this.ledger.transition(PAYMENTS, payment, to, cause);
  }

  private async completeCreation(
    payment: Payment,
    data: components['schemas']['PaymentsInitiationResponse'],
    headers: Record<string, string>,
  ): Promise<void> {
    payment.upstreamPaymentId = data.paymentId;
    payment.scaRedirect = data._links.scaRedirect?.href ?? null;
    payment.scaApproach = scaApproachOf(headers);
    await this.payments.update(payment.id, {
      upstreamPaymentId: payment.upstreamPaymentId,
      scaRedirect: payment.scaRedirect,
      scaApproach: payment.scaApproach,
    });
    await this.transition(payment, data.transactionStatus, 'upstream-created');
  }

  private accessSubject(payment: Payment, operation: string) {
    return { tenantId: payment.tenantId, paymentId: payment.id, operation, psuPresent: false };
  }
}
