import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { Tenant } from '../access/tenants/tenant.entity.js';
import { Consent } from '../open-banking/consents/consent.entity.js';
import { Payment } from '../open-banking/payments/payment.entity.js';
import { ProviderResource } from '../provider-ledger/provider-resource.entity.js';
import type { AuditExportQuery } from './audit-export.dto.js';
import type {
  AuditAccessesQuery,
  AuditCardResourcesQuery,
  AuditConsentsQuery,
  AuditPageQuery,
  AuditPaymentsQuery,
  AuditTenantsQuery,
} from './audit.dto.js';
import { AccessLogEntry } from './trail/access-log-entry.entity.js';
import { AuditCheckpoint } from './trail/audit-chain.entity.js';

/** Rows fetched from the export's cursor at a time: the export's memory does not grow with the trail. */
const FETCH = 1000;

export interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  totalCount: number;
}

/** One record of the trail as exported (a status change or an access), with the link that seals it. */
export type TrailRecord = Record<
  | 'kind'
  | 'id'
  | 'tenantId'
  | 'at'
  | 'resourceKind'
  | 'resourceId'
  | 'operation'
  | 'fromStatus'
  | 'toStatus'
  | 'cause'
  | 'requestId'
  | 'psuPresent'
  | 'upstreamStatus'
  | 'outcome'
  | 'latencyMs'
  | 'chainSeq'
  | 'chainHash',
  unknown
>;

/**
 * The SQL of the auditor's read-only views, across tenants: pages of consents, payments, accesses, card
 * resources and tenants, single rows, the newest checkpoints, and the whole trail as a cursor.
 */
@Injectable()
export class AuditViewsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Consent) private readonly consents: Repository<Consent>,
    @InjectRepository(Payment) private readonly payments: Repository<Payment>,
    @InjectRepository(ProviderResource)
    private readonly cardResources: Repository<ProviderResource>,
    @InjectRepository(AccessLogEntry) private readonly accesses: Repository<AccessLogEntry>,
    @InjectRepository(AuditCheckpoint) private readonly checkpointRows: Repository<AuditCheckpoint>,
    @InjectRepository(Tenant) private readonly tenants: Repository<Tenant>,
  ) {}

  pageConsents(query: AuditConsentsQuery): Promise<Page<Consent>> {
    const builder = this.consents.createQueryBuilder('c');
    if (query.brandId) builder.andWhere('c.brand_id = :brandId', { brandId: query.brandId });
    if (query.status) builder.andWhere('c.status = :status', { status: query.status });
    return auditPage(builder, 'c', query);
  }

  findConsent(id: string): Promise<Consent | null> {
    return this.consents.findOne({ where: { id } });
  }

  pagePayments(query: AuditPaymentsQuery): Promise<Page<Payment>> {
    const builder = this.payments.createQueryBuilder('p');
    if (query.brandId) builder.andWhere('p.brand_id = :brandId', { brandId: query.brandId });
    if (query.status) builder.andWhere('p.status = :status', { status: query.status });
    return auditPage(builder, 'p', query);
  }

  findPayment(id: string): Promise<Payment | null> {
    return this.payments.findOne({ where: { id } });
  }

  pageAccesses(query: AuditAccessesQuery): Promise<Page<AccessLogEntry>> {
    const builder = this.accesses.createQueryBuilder('a');
    if (query.kind === 'consent') builder.andWhere('a.consent_id IS NOT NULL');
    if (query.kind === 'payment') builder.andWhere('a.payment_id IS NOT NULL');
    if (query.kind === 'card') builder.andWhere('a.consent_id IS NULL AND a.payment_id IS NULL');
    if (query.operation)
      builder.andWhere('a.operation = :operation', { operation: query.operation });
    return auditPage(builder, 'a', query);
  }

  pageCardResources(query: AuditCardResourcesQuery): Promise<Page<ProviderResource>> {
    const builder = this.cardResources.createQueryBuilder('r');
    if (query.kind) builder.andWhere('r.kind = :kind', { kind: query.kind });
    if (query.status) builder.andWhere('r.status = :status', { status: query.status });
    if (query.providerId)
      builder.andWhere('(r.token = :providerId OR r.parent_token = :providerId)', {
        providerId: query.providerId,
      });
    return auditPage(builder, 'r', query);
  }

  findCardResource(id: string): Promise<ProviderResource | null> {
    return this.cardResources.findOne({ where: { id } });
  }

  /** Tenants whose name contains `query.name` (any case), by name, with their ids and names only. */
  async pageTenants(query: AuditTenantsQuery): Promise<Page<Pick<Tenant, 'id' | 'name'>>> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 200;
    const builder = this.tenants.createQueryBuilder('t').select(['t.id', 't.name']);
    if (query.name)
      builder.where("t.name ILIKE :name ESCAPE '\\'", {
        name: `%${query.name.replace(/[\\%_]/g, '\\$&')}%`,
      });
    const [items, totalCount] = await builder
      .orderBy('t.name', 'ASC')
      .addOrderBy('t.id', 'ASC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
    return { items, page, pageSize, totalCount };
  }

  /** The newest checkpoints, newest first, and how many there are in all. */
  latestCheckpoints(limit: number): Promise<[AuditCheckpoint[], number]> {
    return this.checkpointRows.findAndCount({ order: { seq: 'DESC' }, take: limit });
  }

  /**
   * Every status change and every access of the trail (filtered by tenant and time), in time order,
   * each with its chain link: read from a cursor in one REPEATABLE READ snapshot, FETCH rows at a time.
   */
  async *trail(query: AuditExportQuery): AsyncGenerator<TrailRecord[]> {
    const params: unknown[] = [];
    const where = (alias: string, at: string) => {
      const clauses: string[] = [];
      if (query.tenantId) clauses.push(`${alias}.tenant_id = $${params.push(query.tenantId)}`);
      if (query.from) clauses.push(`${alias}.${at} >= $${params.push(query.from)}`);
      if (query.to) clauses.push(`${alias}.${at} < $${params.push(query.to)}`);
      return clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
    };
    const sql = `
      SELECT 'status_change' AS "kind", s.id::text AS "id", s.tenant_id AS "tenantId", s.changed_at AS "at",
             s.subject_kind AS "resourceKind", s.subject_id AS "resourceId", NULL AS "operation",
             s.from_status AS "fromStatus", s.to_status AS "toStatus", s.cause AS "cause",
             s.request_id AS "requestId", NULL::boolean AS "psuPresent", NULL::int AS "upstreamStatus",
             NULL AS "outcome", NULL::int AS "latencyMs", c.seq::text AS "chainSeq", c.chain_hash AS "chainHash"
      FROM status_changes s
      LEFT JOIN audit_chain c ON c.entry_kind = 'status_change' AND c.entry_id = s.id AND c.entry_at = s.changed_at
      ${where('s', 'changed_at')}
      UNION ALL
      SELECT 'access_log', a.id::text, a.tenant_id, a.created_at,
             CASE WHEN a.consent_id IS NOT NULL THEN 'consent'
                  WHEN a.payment_id IS NOT NULL THEN 'payment' ELSE 'card' END,
             coalesce(a.consent_id, a.payment_id, a.card_resource_id), a.operation, NULL, NULL, NULL, a.request_id,
             a.psu_present, a.upstream_status, a.outcome, a.latency_ms, c.seq::text, c.chain_hash
      FROM access_log a
      LEFT JOIN audit_chain c ON c.entry_kind = 'access_log' AND c.entry_id = a.id AND c.entry_at = a.created_at
      ${where('a', 'created_at')}
      ORDER BY "at", "kind", "id"`;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      await runner.query(`DECLARE audit_export NO SCROLL CURSOR FOR ${sql}`, params);
      for (;;) {
        const rows = (await runner.query(`FETCH ${FETCH} FROM audit_export`)) as TrailRecord[];
        if (rows.length === 0) break;
        yield rows;
        if (rows.length < FETCH) break;
      }
      await runner.commitTransaction();
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }
}

/**
 * The auditor's shared filters (tenant by id, or by name or slug; a time column, `created_at` unless
 * given) and paging, newest first: every auditor list pages the same way.
 */
export async function auditPage<T extends ObjectLiteral>(
  builder: SelectQueryBuilder<T>,
  alias: string,
  query: AuditPageQuery,
  at = 'created_at',
): Promise<Page<T>> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 50;
  if (query.tenantId)
    builder.andWhere(`${alias}.tenant_id = :tenantId`, { tenantId: query.tenantId });
  if (query.tenantName)
    builder.andWhere(
      `${alias}.tenant_id IN (SELECT id FROM tenants WHERE lower(name) = lower(:tenantName) OR slug = lower(:tenantName))`,
      { tenantName: query.tenantName },
    );
  if (query.createdFrom) builder.andWhere(`${alias}.${at} >= :from`, { from: query.createdFrom });
  if (query.createdTo) builder.andWhere(`${alias}.${at} < :to`, { to: query.createdTo });
  const [items, totalCount] = await builder
    .orderBy(`${alias}.${at}`, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .skip((page - 1) * pageSize)
    .take(pageSize)
    .getManyAndCount();
  return { items, page, pageSize, totalCount };
}
