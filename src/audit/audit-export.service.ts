import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AuditExportQuery } from './audit-export.dto.js';
import { AccessLogService } from './trail/access-log.service.js';
import { AuditVerifierService, type VerificationReport } from './trail/audit-verifier.service.js';

/** Rows fetched from the cursor at a time: the export's memory does not grow with the trail. */
const FETCH = 1000;

const COLUMNS = [
  'kind',
  'id',
  'tenantId',
  'at',
  'resourceKind',
  'resourceId',
  'operation',
  'fromStatus',
  'toStatus',
  'cause',
  'requestId',
  'psuPresent',
  'upstreamStatus',
  'outcome',
  'latencyMs',
  'chainSeq',
  'chainHash',
] as const;

type ExportRow = Record<(typeof COLUMNS)[number], unknown>;

/**
 * The trail as a file: every status change and every call made under a consent or payment, in time
 * order, each with the chain link that seals it, and the verification it was checked with. Streamed
 * from a database cursor, a thousand rows at a time.
 */
@Injectable()
export class AuditExportService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly verifier: AuditVerifierService,
    private readonly accessLog: AccessLogService,
  ) {}

  async *export(query: AuditExportQuery): AsyncGenerator<string> {
    await this.accessLog.flushCompletions();
    const verification = await this.verifier.verify();
    const format = query.format ?? 'json';
    if (format === 'json') yield `{"verification":${JSON.stringify(verification)},"records":[`;
    else yield csvPreamble(verification);
    let first = true;
    for await (const rows of this.rows(query)) {
      let chunk = '';
      for (const row of rows) {
        if (format === 'json') {
          chunk += `${first ? '' : ','}\n${JSON.stringify(row)}`;
          first = false;
        } else chunk += `${COLUMNS.map((column) => csvField(row[column])).join(',')}\n`;
      }
      yield chunk;
    }
    if (format === 'json') yield '\n]}\n';
  }

  private async *rows(query: AuditExportQuery): AsyncGenerator<ExportRow[]> {
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
      LEFT JOIN audit_chain c ON c.entry_kind = 'status_change' AND c.entry_id = s.id
      ${where('s', 'changed_at')}
      UNION ALL
      SELECT 'access_log', a.id::text, a.tenant_id, a.created_at,
             CASE WHEN a.consent_id IS NOT NULL THEN 'consent'
                  WHEN a.payment_id IS NOT NULL THEN 'payment' ELSE 'card' END,
             coalesce(a.consent_id, a.payment_id, a.card_resource_id), a.operation, NULL, NULL, NULL, a.request_id,
             a.psu_present, a.upstream_status, a.outcome, a.latency_ms, c.seq::text, c.chain_hash
      FROM access_log a
      LEFT JOIN audit_chain c ON c.entry_kind = 'access_log' AND c.entry_id = a.id
      ${where('a', 'created_at')}
      ORDER BY "at", "kind", "id"`;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      await runner.query(`DECLARE audit_export NO SCROLL CURSOR FOR ${sql}`, params);
      for (;;) {
        const rows = (await runner.query(`FETCH ${FETCH} FROM audit_export`)) as ExportRow[];
        if (rows.length === 0) break;
        yield rows.map((row) => ({
          ...row,
          at: row.at instanceof Date ? row.at.toISOString() : row.at,
        }));
        if (rows.length < FETCH) break;
      }
      await runner.commitTransaction();
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }
}

function csvPreamble(report: VerificationReport): string {
  const latest = report.checkpoints.latest;
  return [
    `# verification: ${report.ok ? 'ok' : 'BROKEN'} at ${report.verifiedAt}; links ${report.links}; head ${report.head ? `${report.head.seq} ${report.head.chainHash}` : 'none'}`,
    `# checkpoint: ${latest ? `${latest.seq} ${latest.chainHash} signed ${latest.signedAt} by key ${latest.keyId}` : 'none'}`,
    ...(report.firstBreak
      ? [
          `# first break: ${report.firstBreak.problem} at link ${report.firstBreak.seq ?? '-'}: ${report.firstBreak.detail}`,
        ]
      : []),
    COLUMNS.join(','),
    '',
  ].join('\n');
}

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  // RFC 4180 quoting; a leading =, +, - or @ is prefixed so that a spreadsheet never runs it.
  const safe = /^[=+\-@]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
