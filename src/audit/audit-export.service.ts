import { Injectable } from '@nestjs/common';
import type { AuditExportQuery } from './audit-export.dto.js';
import { AuditViewsRepository, type TrailRecord } from './audit-views.repository.js';
import { AccessLogService } from './trail/access-log.service.js';
import { AuditVerifierService, type VerificationReport } from './trail/audit-verifier.service.js';

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
] as const satisfies readonly (keyof TrailRecord)[];

/**
 * The trail as a file: every status change and every call made under a consent or payment, in time
 * order, each with the chain link that seals it, and the verification it was checked with. Streamed
 * from a database cursor, a thousand rows at a time.
 */
@Injectable()
export class AuditExportService {
  constructor(
    private readonly views: AuditViewsRepository,
    private readonly verifier: AuditVerifierService,
    private readonly accessLog: AccessLogService,
  ) {}

  async *export(query: AuditExportQuery): AsyncGenerator<string> {
    await this.accessLog.flushCompletions();
    const verification = await this.verifier.verify({ trigger: 'export' });
    const format = query.format ?? 'json';
    if (format === 'json') yield `{"verification":${JSON.stringify(verification)},"records":[`;
    else yield csvPreamble(verification);
    let first = true;
    for await (const rows of this.views.trail(query)) {
      let chunk = '';
      for (const record of rows) {
        const row = {
          ...record,
          at: record.at instanceof Date ? record.at.toISOString() : record.at,
        };
        if (format === 'json') {
          chunk += `${first ? '' : ','}\n${JSON.stringify(row)}`;
          first = false;
        } else chunk += `${COLUMNS.map((column) => csvField(row[column])).join(',')}\n`;
      }
      yield chunk;
    }
    if (format === 'json') yield '\n]}\n';
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
