import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { Repository } from 'typeorm';
import type { JsonObject } from '../../platform/common/json.js';
import { PROBLEM_TYPES, ProblemException } from '../../platform/errors/problem.js';
import { ValidationFailedException } from '../../platform/errors/to-problem.js';
import {
  OpenBankingClient,
  scaRedirectHeaders,
} from '../../upstreams/open-banking/open-banking.client.js';
import { requestIdHeader } from '../../upstreams/http/upstream-transport.js';
import { AccessLogService } from '../../audit/trail/access-log.service.js';
import { StatusHistoryService } from '../../audit/trail/status-history.service.js';
import { psd2Contract } from '../../upstreams/open-banking/psd2-schemas.js';
import { ScaSessionsService } from '../sca-sessions/sca-sessions.service.js';
import { newScaSubject, scaApproachOf } from '../sca-sessions/sca-subject.columns.js';
import {
  failureOutcome,
  inDoubtProblem,
  outcomeUnknown,
  type UpstreamAnswer,
} from '../../upstreams/http/upstream-caller.js';
import { bindIdempotentResource } from '../../platform/idempotency/idempotency-binding.js';
import { canonicalPaymentProduct, type CreatePaymentRequest } from './dto/payment.dto.js';
import { Payment } from './payment.entity.js';
import { leaseInDoubt } from '../../platform/in-doubt/in-doubt-lease.js';

/** Statuses after which the bank will not change its mind. */
const FINAL = ['ACCC', 'ACSC', 'ACWP', 'RJCT', 'CANC', 'failed'];
export const REFUSED_PAYMENT_STATUSES = ['RJCT', 'CANC', 'failed'];

/** Payment initiation: validated against the product's rules, stored before and after the bank, with status history. */
@Injectable()
export class PaymentsService {
  constructor(
    @InjectRepository(Payment) private readonly payments: Repository<Payment>,
    private readonly history: StatusHistoryService,
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

    const payment = this.payments.create({
      id: randomUUID(),
      tenantId,
      brandId: request.brandId,
      paymentProduct: canonical,
      upstreamPaymentId: null,
      details: request.payment as JsonObject,
      status: 'creating',
      ...newScaSubject(request),
    });
    await this.payments.manager.transaction(async (manager) => {
      await manager.insert(Payment, payment as never);
      await this.history.append(this.subject(payment), null, 'creating', 'created', manager);
    });
    await bindIdempotentResource(`/v1/payments/${payment.id}`);
    const callback = await this.sca.open(this.subject(payment));
    const started = performance.now();
    const logId = await this.accessLog.begin(this.accessSubject(payment, 'initiatePayment'));
    let answer: UpstreamAnswer<unknown>;
    try {
      answer = await this.bank.call('initiatePayment', payment.brandId, (api) =>
        api.POST('/{brandId}/bg/v1/payments/{paymentProduct}', {
          params: {
            path: { brandId: payment.brandId, paymentProduct: canonical },
            header: scaRedirectHeaders(callback),
          },
          body: request.payment,
        }),
      );
    } catch (error) {
      const unknown = outcomeUnknown(error);
      await this.complete(logId, null, failureOutcome(error), started);
      if (!unknown) {
        await this.transition(payment, 'failed', 'upstream-not-sent');
        throw error;
      }
      // It may exist at the bank: in doubt until the resolver settles it, never failed.
      await this.transition(payment, 'unknown', 'upstream-outcome-unknown');
      throw inDoubtProblem(error as ProblemException, {
        paymentId: payment.id,
        paymentStatus: payment.status,
        resource: `/v1/payments/${payment.id}`,
      });
    }
    await this.complete(
      logId,
      answer.status,
      answer.status < 400 ? 'ok' : `upstream:${answer.messages[0]?.code ?? answer.status}`,
      started,
    );
    if (answer.status >= 400) {
      await this.transition(
        payment,
        'failed',
        `upstream-refused:${answer.messages[0]?.code ?? answer.status}`,
      );
      throw this.bank.refusal('initiatePayment', answer);
    }
    const data = answer.data as {
      paymentId: string;
      transactionStatus: string;
      _links?: { scaRedirect?: { href: string } };
    };
    payment.upstreamPaymentId = data.paymentId;
    payment.scaRedirect = data._links?.scaRedirect?.href ?? null;
    payment.scaApproach = scaApproachOf(answer.headers);
    await this.payments.update(
      { id: payment.id },
      {
        upstreamPaymentId: payment.upstreamPaymentId,
        scaRedirect: payment.scaRedirect,
        scaApproach: payment.scaApproach,
      },
    );
    await this.transition(payment, data.transactionStatus, 'upstream-created');
    return payment;
  }

  async find(tenantId: string, paymentId: string): Promise<Payment> {
    const payment = await this.payments.findOne({ where: { id: paymentId, tenantId } });
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
    const started = performance.now();
    const logId = await this.accessLog.begin(this.accessSubject(payment, operation));
    const path = {
      brandId: payment.brandId,
      paymentProduct: canonicalPaymentProduct(payment.paymentProduct),
      paymentId: payment.upstreamPaymentId,
    };
    let answer: UpstreamAnswer<unknown>;
    try {
      answer = await this.bank.call('getPayment', payment.brandId, (api) =>
        api.GET('/{brandId}/bg/v1/payments/{paymentProduct}/{paymentId}', {
          params: { path, header: requestIdHeader() },
        }),
      );
    } catch (error) {
      await this.complete(logId, null, failureOutcome(error), started);
      throw error;
    }
    await this.complete(
      logId,
      answer.status,
      answer.status < 400 ? 'ok' : `upstream:${answer.messages[0]?.code ?? answer.status}`,
      started,
    );
    if (answer.status >= 400) throw this.bank.refusal('getPayment', answer);
    const data = answer.data as { transactionStatus: string; paymentDetails?: JsonObject };
    if (data.paymentDetails?.debtorAccount && !payment.details.debtorAccount) {
      payment.details = { ...payment.details, debtorAccount: data.paymentDetails.debtorAccount };
      await this.payments.update({ id: payment.id }, { details: payment.details as never });
    }
    if (data.transactionStatus !== payment.status)
      await this.transition(payment, data.transactionStatus, cause);
    return payment;
  }

  async completeSca(payment: Payment): Promise<Payment> {
    payment.lastScaAt = new Date();
    await this.payments.update({ id: payment.id }, { lastScaAt: payment.lastScaAt });
    return this.refresh(payment, 'scaCallback', 'sca-callback');
  }

  /** Settles payments in doubt with the bank, under a lease per row (see ConsentsService). */
  async resolveInDoubt(olderThanMs: number, giveUpAfterMs: number): Promise<number> {
    let worked = 0;
    // Batch after batch: a leased row is not leased again in this pass, so the loop ends.
    for (;;) {
      const ids = await leaseInDoubt(this.payments.manager, 'payments', olderThanMs);
      if (ids.length === 0) return worked;
      worked += ids.length;
      for (const id of ids) await this.resolveOnePayment(id, giveUpAfterMs);
    }
  }

  private async resolveOnePayment(id: string, giveUpAfterMs: number): Promise<void> {
    const payment = await this.payments.findOneByOrFail({ id });
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
    return this.history.transition(Payment, 'payment', payment, to, cause);
  }

  private accessSubject(payment: Payment, operation: string) {
    return { tenantId: payment.tenantId, paymentId: payment.id, operation, psuPresent: false };
  }

  private complete(
    logId: string,
    upstreamStatus: number | null,
    outcome: string,
    started: number,
  ): Promise<boolean> {
    return this.accessLog.complete(logId, {
      outcome,
      upstreamStatus,
      latencyMs: Math.round(performance.now() - started),
    });
  }
}
