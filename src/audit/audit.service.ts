import { Injectable } from '@nestjs/common';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import { AccessLogService } from './trail/access-log.service.js';
import type { Consent } from '../open-banking/consents/consent.entity.js';
import { ConsentView } from '../open-banking/consents/dto/consent.dto.js';
import type { Payment } from '../open-banking/payments/payment.entity.js';
import { PaymentView } from '../open-banking/payments/dto/payment.dto.js';
import { StatusHistoryService } from './trail/status-history.service.js';
import type { AccessLogEntry } from './trail/access-log-entry.entity.js';
import type { StatusChange } from './trail/status-change.entity.js';
import {
  PROVIDER_RESOURCE_SUBJECTS,
  type ProviderResource,
} from '../provider-ledger/provider-resource.entity.js';
import type {
  AccessLogView,
  AuditCardResourceDetail,
  AuditCardResourcePage,
  AuditCardResourcesQuery,
  AuditCardResourceView,
  AuditAccessesQuery,
  AuditAccessPage,
  AuditConsentDetail,
  AuditConsentPage,
  AuditConsentsQuery,
  AuditConsentView,
  AuditPaymentDetail,
  AuditPaymentPage,
  AuditPaymentsQuery,
  AuditPaymentView,
  AuditTenantPage,
  AuditTenantsQuery,
  StatusChangeView,
} from './audit.dto.js';
import { isUuid } from '../shared/uuid.js';
import type { CheckpointList, TrustedKeyView } from './audit-chain.dto.js';
import { AuditViewsRepository } from './audit-views.repository.js';

/**
 * Read-only views for compliance, across tenants: consents, payments and card resources, each with its status history
 * and access log, every access on its own, and the chain's checkpoints.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly views: AuditViewsRepository,
    private readonly history: StatusHistoryService,
    private readonly accessLog: AccessLogService,
  ) {}

  async listConsents(query: AuditConsentsQuery): Promise<AuditConsentPage> {
    const page = await this.views.pageConsents(query);
    return { ...page, items: page.items.map((row) => this.consentView(row)) };
  }

  async consentDetail(consentId: string): Promise<AuditConsentDetail> {
    const consent = isUuid(consentId) ? await this.views.findConsent(consentId) : null;
    if (!consent) throw notFound(`No consent ${consentId}`);
    const [history, accesses] = await Promise.all([
      this.history.of('consent', consent.id),
      this.accessLog.forConsent(consent.id),
    ]);
    return {
      ...this.consentView(consent),
      history: history.map(changeView),
      accessLog: accesses.map(accessView),
    };
  }

  async listPayments(query: AuditPaymentsQuery): Promise<AuditPaymentPage> {
    const page = await this.views.pagePayments(query);
    return { ...page, items: page.items.map((row) => this.paymentView(row)) };
  }

  async paymentDetail(paymentId: string): Promise<AuditPaymentDetail> {
    const payment = isUuid(paymentId) ? await this.views.findPayment(paymentId) : null;
    if (!payment) throw notFound(`No payment ${paymentId}`);
    const [history, accesses] = await Promise.all([
      this.history.of('payment', payment.id),
      this.accessLog.forPayment(payment.id),
    ]);
    return {
      ...this.paymentView(payment),
      history: history.map(changeView),
      accessLog: accesses.map(accessView),
    };
  }

  /** Every call made under a consent or payment, newest first. */
  async listAccesses(query: AuditAccessesQuery): Promise<AuditAccessPage> {
    await this.accessLog.flushCompletions();
    const page = await this.views.pageAccesses(query);
    return {
      ...page,
      items: page.items.map((entry) => ({
        ...accessView(entry),
        tenantId: entry.tenantId,
        kind: entry.consentId
          ? ('consent' as const)
          : entry.paymentId
            ? ('payment' as const)
            : ('card' as const),
        resourceId: entry.consentId ?? entry.paymentId ?? entry.cardResourceId,
      })),
    };
  }

  /** Card payments, refunds and customers of every tenant, newest first. */
  async listCardResources(query: AuditCardResourcesQuery): Promise<AuditCardResourcePage> {
    const page = await this.views.pageCardResources(query);
    return { ...page, items: page.items.map(cardResourceView) };
  }

  async cardResourceDetail(id: string): Promise<AuditCardResourceDetail> {
    const row = await this.views.findCardResource(id);
    if (!row) throw notFound(`No card resource ${id}`);
    const kind = PROVIDER_RESOURCE_SUBJECTS[row.kind];
    const [history, accesses] = await Promise.all([
      this.history.of(kind, row.id),
      this.accessLog.forCardResource(row.id),
    ]);
    return {
      ...cardResourceView(row),
      history: history.map(changeView),
      accessLog: accesses.map(accessView),
    };
  }

  /** Tenants by name, with their ids only: what an auditor needs to find a tenant's resources. */
  async listTenants(query: AuditTenantsQuery): Promise<AuditTenantPage> {
    const { page, pageSize, totalCount, items } = await this.views.pageTenants(query);
    return { page, pageSize, totalCount, items: items.map(({ id, name }) => ({ id, name })) };
  }

  async checkpoints(
    publicKeyPem: string | null,
    trustedKeys: TrustedKeyView[],
  ): Promise<CheckpointList> {
    const [rows, totalCount] = await this.views.latestCheckpoints(100);
    return {
      publicKeyPem,
      trustedKeys: trustedKeys.map(({ keyId, publicKeyPem }) => ({ keyId, publicKeyPem })),
      totalCount,
      items: rows.map((row) => ({
        seq: String(row.seq),
        chainHash: row.chainHash,
        signedAt: row.signedAt.toISOString(),
        keyId: row.keyId,
        signature: row.signature,
      })),
    };
  }

  private consentView(consent: Consent): AuditConsentView {
    return {
      ...ConsentView.of(consent),
      tenantId: consent.tenantId,
      upstreamConsentId: consent.upstreamConsentId,
    };
  }

  private paymentView(payment: Payment): AuditPaymentView {
    return {
      ...PaymentView.of(payment),
      tenantId: payment.tenantId,
      upstreamPaymentId: payment.upstreamPaymentId,
    };
  }
}

function notFound(detail: string): ProblemException {
  return new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail,
  });
}

function changeView(change: StatusChange): StatusChangeView {
  return {
    from: change.fromStatus,
    to: change.toStatus,
    at: change.changedAt.toISOString(),
    cause: change.cause,
    requestId: change.requestId,
  };
}

function accessView(entry: AccessLogEntry): AccessLogView {
  return {
    at: entry.createdAt.toISOString(),
    operation: entry.operation,
    accountId: entry.accountId,
    psuPresent: entry.psuPresent,
    requestId: entry.requestId,
    upstreamStatus: entry.upstreamStatus,
    outcome: entry.outcome,
    latencyMs: entry.latencyMs,
  };
}

function cardResourceView(row: ProviderResource): AuditCardResourceView {
  return {
    id: row.id,
    tenantId: row.tenantId,
    kind: row.kind,
    token: row.token,
    parentToken: row.parentToken,
    merchantRef: row.merchantRef,
    origin: row.origin,
    status: row.status,
    amount: row.amount,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
