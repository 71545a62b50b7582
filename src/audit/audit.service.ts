import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import { AccessLogService } from './trail/access-log.service.js';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { ConsentView } from '../open-banking/consents/dto/consent.dto.js';
import { Payment } from '../open-banking/payments/payment.entity.js';
import { PaymentView } from '../open-banking/payments/dto/payment.dto.js';
import { StatusHistoryService } from './trail/status-history.service.js';
import type { AccessLogEntry } from './trail/access-log-entry.entity.js';
import type { StatusChange } from './trail/status-change.entity.js';
import {
  PROVIDER_RESOURCE_SUBJECTS,
  ProviderResource,
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
  AuditPageQuery,
  AuditPaymentDetail,
  AuditPaymentPage,
  AuditPaymentsQuery,
  AuditPaymentView,
  AuditTenantPage,
  AuditTenantsQuery,
  StatusChangeView,
} from './audit.dto.js';
import { isUuid } from '../shared/uuid.js';
import type { CheckpointList } from './audit-chain.dto.js';
import { AuditCheckpoint } from './trail/audit-chain.entity.js';
import { Tenant } from '../access/tenants/tenant.entity.js';

/**
 * Read-only views for compliance, across tenants: consents, payments and card resources, each with its status history
 * and access log, every access on its own, and the chain's checkpoints.
 */
@Injectable()
export class AuditService {
  constructor(
    @InjectRepository(Consent) private readonly consents: Repository<Consent>,
    @InjectRepository(Payment) private readonly payments: Repository<Payment>,
    @InjectRepository(ProviderResource)
    private readonly cardResources: Repository<ProviderResource>,
    @InjectRepository(AuditCheckpoint) private readonly checkpointRows: Repository<AuditCheckpoint>,
    @InjectRepository(Tenant) private readonly tenants: Repository<Tenant>,
    private readonly history: StatusHistoryService,
    private readonly accessLog: AccessLogService,
  ) {}

  async listConsents(query: AuditConsentsQuery): Promise<AuditConsentPage> {
    const builder = this.consents.createQueryBuilder('c');
    if (query.brandId) builder.andWhere('c.brand_id = :brandId', { brandId: query.brandId });
    if (query.status) builder.andWhere('c.status = :status', { status: query.status });
    const page = await this.page(builder, 'c', query);
    return { ...page, items: page.items.map((row) => this.consentView(row)) };
  }

  async consentDetail(consentId: string): Promise<AuditConsentDetail> {
    const consent = isUuid(consentId)
      ? await this.consents.findOne({ where: { id: consentId } })
      : null;
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
    const builder = this.payments.createQueryBuilder('p');
    if (query.brandId) builder.andWhere('p.brand_id = :brandId', { brandId: query.brandId });
    if (query.status) builder.andWhere('p.status = :status', { status: query.status });
    const page = await this.page(builder, 'p', query);
    return { ...page, items: page.items.map((row) => this.paymentView(row)) };
  }

  async paymentDetail(paymentId: string): Promise<AuditPaymentDetail> {
    const payment = isUuid(paymentId)
      ? await this.payments.findOne({ where: { id: paymentId } })
      : null;
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
    const builder = this.accessLog.query('a');
    if (query.kind === 'consent') builder.andWhere('a.consent_id IS NOT NULL');
    if (query.kind === 'payment') builder.andWhere('a.payment_id IS NOT NULL');
    if (query.kind === 'card') builder.andWhere('a.consent_id IS NULL AND a.payment_id IS NULL');
    if (query.operation)
      builder.andWhere('a.operation = :operation', { operation: query.operation });
    const page = await this.page(builder, 'a', query);
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
    const builder = this.cardResources.createQueryBuilder('r');
    if (query.kind) builder.andWhere('r.kind = :kind', { kind: query.kind });
    if (query.status) builder.andWhere('r.status = :status', { status: query.status });
    const page = await this.page(builder, 'r', query);
    return { ...page, items: page.items.map(cardResourceView) };
  }

  async cardResourceDetail(id: string): Promise<AuditCardResourceDetail> {
    const row = await this.cardResources.findOne({ where: { id } });
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
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 200;
    const builder = this.tenants.createQueryBuilder('t').select(['t.id', 't.name']);
    if (query.name)
      builder.where("t.name ILIKE :name ESCAPE '\\'", {
        name: `%${query.name.replace(/[\\%_]/g, '\\$&')}%`,
      });
    const [rows, total] = await builder
      .orderBy('t.name', 'ASC')
      .addOrderBy('t.id', 'ASC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
    return { page, pageSize, total, items: rows.map(({ id, name }) => ({ id, name })) };
  }

  async checkpoints(publicKeyPem: string | null): Promise<CheckpointList> {
    const rows = await this.checkpointRows.find({ order: { seq: 'DESC' }, take: 100 });
    return {
      publicKeyPem,
      items: rows.map((row) => ({
        seq: String(row.seq),
        chainHash: row.chainHash,
        signedAt: row.signedAt.toISOString(),
        keyId: row.keyId,
        signature: row.signature,
      })),
    };
  }

  /** The shared filters (tenant, creation time) and paging, newest first. */
  private async page<T extends ObjectLiteral>(
    builder: SelectQueryBuilder<T>,
    alias: string,
    query: AuditPageQuery,
  ): Promise<{ items: T[]; page: number; pageSize: number; total: number }> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 50;
    if (query.tenantId)
      builder.andWhere(`${alias}.tenant_id = :tenantId`, { tenantId: query.tenantId });
    if (query.tenantName)
      builder.andWhere(
        `${alias}.tenant_id IN (SELECT id FROM tenants WHERE lower(name) = lower(:tenantName))`,
        { tenantName: query.tenantName },
      );
    if (query.createdFrom)
      builder.andWhere(`${alias}.created_at >= :from`, { from: query.createdFrom });
    if (query.createdTo) builder.andWhere(`${alias}.created_at < :to`, { to: query.createdTo });
    const [items, total] = await builder
      .orderBy(`${alias}.created_at`, 'DESC')
      .addOrderBy(`${alias}.id`, 'DESC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
    return { items, page, pageSize, total };
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
    status: row.status,
    amount: row.amount,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
