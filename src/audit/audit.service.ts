import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { PROBLEM_TYPES, ProblemException } from '../platform/errors/problem.js';
import { AccessLogService } from './trail/access-log.service.js';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { ConsentView } from '../open-banking/consents/dto/consent.dto.js';
import { StatusHistoryService } from './trail/status-history.service.js';
import type {
  AuditConsentDetail,
  AuditConsentPage,
  AuditConsentsQuery,
  AuditConsentView,
} from './audit.dto.js';
import { isUuid } from '../shared/uuid.js';

/** Read-only views for compliance: consents across tenants, each with its status history and access log. */
@Injectable()
export class AuditService {
  constructor(
    @InjectRepository(Consent) private readonly consents: Repository<Consent>,
    private readonly history: StatusHistoryService,
    private readonly accessLog: AccessLogService,
  ) {}

  async listConsents(query: AuditConsentsQuery): Promise<AuditConsentPage> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 50;
    const builder = this.consents.createQueryBuilder('c');
    if (query.tenantId) builder.andWhere('c.tenant_id = :tenantId', { tenantId: query.tenantId });
    if (query.brandId) builder.andWhere('c.brand_id = :brandId', { brandId: query.brandId });
    if (query.status) builder.andWhere('c.status = :status', { status: query.status });
    if (query.createdFrom) builder.andWhere('c.created_at >= :from', { from: query.createdFrom });
    if (query.createdTo) builder.andWhere('c.created_at < :to', { to: query.createdTo });
    const [rows, total] = await builder
      .orderBy('c.created_at', 'DESC')
      .addOrderBy('c.id', 'ASC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
    return { items: rows.map((row) => this.view(row)), page, pageSize, total };
  }

  async consentDetail(consentId: string): Promise<AuditConsentDetail> {
    const consent = isUuid(consentId)
      ? await this.consents.findOne({ where: { id: consentId } })
      : null;
    if (!consent)
      throw new ProblemException({
        status: 404,
        type: PROBLEM_TYPES.notFound,
        title: 'Not Found',
        detail: `No consent ${consentId}`,
      });
    const [history, accesses] = await Promise.all([
      this.history.of('consent', consent.id),
      this.accessLog.forConsent(consent.id),
    ]);
    return {
      ...this.view(consent),
      history: history.map((change) => ({
        from: change.fromStatus,
        to: change.toStatus,
        at: change.changedAt.toISOString(),
        cause: change.cause,
        requestId: change.requestId,
      })),
      accessLog: accesses.map((entry) => ({
        at: entry.createdAt.toISOString(),
        operation: entry.operation,
        accountId: entry.accountId,
        psuPresent: entry.psuPresent,
        requestId: entry.requestId,
        upstreamStatus: entry.upstreamStatus,
        outcome: entry.outcome,
        latencyMs: entry.latencyMs,
      })),
    };
  }

  private view(consent: Consent): AuditConsentView {
    return {
      ...ConsentView.of(consent),
      tenantId: consent.tenantId,
      upstreamConsentId: consent.upstreamConsentId,
    };
  }
}
