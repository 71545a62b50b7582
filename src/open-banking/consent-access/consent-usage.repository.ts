import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { RateLimitRow } from '#src/access/auth/rate-limit.service.js';
import { ApiKeysRepository } from '#src/access/tenants/api-keys.repository.js';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import type { CompletionParams } from '#src/audit/trail/completion-queue.js';
import { PlainSql } from '#src/platform/database/plain-sql.js';
import { ConsentsRepository } from '../consents/consents.repository.js';

const TODAY = "(now() AT TIME ZONE 'UTC')::date";

/** An admission's row: the key's rate count, the consent's columns (ConsentsRepository.columnsSql), today's units. */
export type AdmissionRow = Partial<RateLimitRow> & {
  used_today: number;
  /** The consent row's version (ConsentsRepository.versionSql), when the group statement read it. */
  consent_version?: string | null;
  /** The access-log row the admission wrote ahead, when it wrote one. */
  log_id?: string | null;
  /** On the group's first row: the access-log rows whose carried completions it wrote. */
  completed?: string[] | null;
} & Record<string, unknown>;

/** One call in an admission group statement. */
export type AdmissionCall = [
  keyId: string,
  consentId: string,
  tenantId: string,
  operation: string,
  accountId: string | null,
  psuPresent: boolean,
  requestId: string | null,
  /** Whether the admission writes the access-log row ahead (not when the read takes a budget unit). */
  logAhead: boolean,
  /** The version of the consent this process holds ('' when none): its columns then come back NULL. */
  knownVersion: string,
];

/**
 * The SQL of a consent's use (table `consent_usage`: unattended reads per consent per UTC day, shared
 * by the replicas) and the admission of a call under a consent, the hot path of every read: hand-written
 * statements on PlainSql, whose text and names the benchmark measures.
 */
@Injectable()
export class ConsentUsageRepository {
  private readonly sql: PlainSql;
  private readonly admitAloneSql: string;
  private readonly admitGroupSql: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    consents: ConsentsRepository,
  ) {
    this.sql = new PlainSql(dataSource);
    // One round-trip for every admission in the group: each request counted against its key, its
    // consent read (only the tenant's) with today's budget units, and, for a call that will go to the
    // bank if the consent is valid and the key within its minute, its access-log row written ahead
    // (outcome `sent`; completed with the outcome, a local refusal included). An unattended read
    // writes its row later, with the budget unit it takes (AccessLogService.beginGated).
    const version = ConsentsRepository.versionSql('c');
    // A consent this process read before at the same version comes back as its id alone.
    const consent = `${consents.columnsSql('c', { unlessUnchanged: `${version} = r.known_version` })},
                     ${version} AS consent_version, ${ConsentUsageRepository.usedTodaySql('c.id')} AS used_today`;
    this.admitGroupSql = `WITH calls AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::varchar[], $5::varchar[],
                              $6::boolean[], $7::uuid[], $8::boolean[], $9::text[])
                  WITH ORDINALITY AS r(key_id, consent_id, tenant_id, operation, account_id, psu_present,
                                       request_id, log_ahead, known_version, ord)
       ),
       ${ApiKeysRepository.groupUsageCte('calls')},
       admitted AS (
         SELECT r.*, u.rate_count, u.rate_reset_seconds, ${consent},
                CASE WHEN r.log_ahead AND c.id IS NOT NULL AND c.status = 'valid' AND u.rate_count <= $10
                     THEN ${AccessLogService.nextAccessLogId} END AS log_id
           FROM calls r JOIN rate_usage u ON u.ord = r.ord
           LEFT JOIN consents c ON c.id = r.consent_id AND c.tenant_id = r.tenant_id
       ),
       ${AccessLogService.writeAheadCte('logged', 'admitted')},
       ${AccessLogService.completionCte('carried', 11, true)}
       SELECT rate_count, rate_reset_seconds, log_id, used_today, consent_version, ${consents.columnNamesSql()},
              CASE WHEN ord = 1 THEN ${AccessLogService.completedIdsSql('carried')} END AS completed
         FROM admitted ORDER BY ord`;
    this.admitAloneSql = `SELECT ${consent} FROM consents c WHERE c.id = $1 AND c.tenant_id = $2`;
  }

  /** SQL for the units taken today by the consent whose id is the expression (0 when none). */
  static usedTodaySql(consentExpr: string): string {
    return `COALESCE((SELECT count FROM consent_usage WHERE consent_id = ${consentExpr} AND day = ${TODAY}), 0)`;
  }

  /**
   * A CTE named `gate` that takes one unit of the consent `consentParam` within `limitParam` (parameter
   * placeholders of the statement it joins) and returns `budget_count`; no row when the budget is spent.
   */
  static takeGateCte(consentParam: string, limitParam: string): string {
    return `gate AS (
         INSERT INTO consent_usage (consent_id, day, count) VALUES (${consentParam}, ${TODAY}, 1)
         ON CONFLICT (consent_id, day) DO UPDATE SET count = consent_usage.count + 1
           WHERE consent_usage.count < ${limitParam}
         RETURNING count AS budget_count
       )`;
  }

  /** The tenant's consent with today's units, counting nothing (no rows when there is no such consent). */
  admitAlone(consentId: string, tenantId: string): Promise<AdmissionRow[]> {
    return this.sql.query<AdmissionRow>('consent-access:admit', this.admitAloneSql, [
      consentId,
      tenantId,
    ]);
  }

  /**
   * The admissions of a group of calls, one row per call in their order, counted against each key's
   * `perMinute`, carrying the access-log `completions` waiting. On a connection of its own: sent the
   * moment the previous one answers (StatementGroup).
   */
  admitGroup(
    calls: AdmissionCall[],
    perMinute: number,
    completions: CompletionParams,
  ): Promise<AdmissionRow[]> {
    return this.sql.queryOnOwnConnection<AdmissionRow>(
      'consent-access:admit-group',
      this.admitGroupSql,
      [
        ...Array.from({ length: 9 }, (_, index) => calls.map((call) => call[index])),
        perMinute,
        ...completions,
      ],
    );
  }

  /** Marks today's budget of the consent used up (`limit` units taken), as the bank counted it. */
  async useUpToday(consentId: string, limit: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO consent_usage (consent_id, day, count) VALUES ($1, ${TODAY}, $2)
       ON CONFLICT (consent_id, day) DO UPDATE SET count = GREATEST(consent_usage.count, excluded.count)`,
      [consentId, limit],
    );
  }

  /** Gives back a unit of today's budget of the consent. */
  async giveBack(consentId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE consent_usage SET count = count - 1 WHERE consent_id = $1 AND day = ${TODAY} AND count > 0`,
      [consentId],
    );
  }
}
