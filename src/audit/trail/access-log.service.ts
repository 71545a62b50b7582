import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository, SelectQueryBuilder } from 'typeorm';
import { PlainSql } from '../../platform/database/plain-sql.js';
import { currentRequestId } from '../../platform/logging/request-context.js';
import { AccessLogEntry } from './access-log-entry.entity.js';

/** Who made a call, under what, and on which account: the part of a row known before the call. */
export type AccessSubject = Pick<AccessLogEntry, 'tenantId' | 'operation' | 'psuPresent'> &
  Partial<Pick<AccessLogEntry, 'consentId' | 'paymentId' | 'accountId' | 'cardResourceId'>>;

/** How a call ended. */
export interface AccessOutcome {
  outcome: string;
  upstreamStatus?: number | null;
  latencyMs: number;
}

/** The outcome of a row written before the bank was called and not completed yet. */
export const SENT = 'sent';

/**
 * A condition written in the same statement as the row (e.g. taking a unit of the daily budget):
 * CTEs that define `gate`, whose parameters are numbered from $9 on; the row is written only when
 * `gate` has a row, and that row comes back with the row's id.
 */
export interface AccessGate {
  name: string;
  cte: string;
  params: unknown[];
}

/** The most completions one group write carries. */
const MAX_GROUP = 256;

interface PendingCompletion {
  id: string;
  result: AccessOutcome;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const INSERT_SENT = `INSERT INTO access_log
         (tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id, outcome,
          card_resource_id)`;

/** How many parameters a written-ahead row takes ($1…$9); a gate's own parameters follow them. */
export const SENT_PARAMETERS = 9;

/**
 * Writes the audit trail of every call made under a consent or a payment. A call to the bank is
 * written ahead (`begin`, outcome `sent`) and completed after (`complete`), so that a crash between
 * the two leaves a row saying the call was sent with its outcome unknown; a call Portico refused
 * itself is one row (`record`).
 */
@Injectable()
export class AccessLogService {
  private readonly sql: PlainSql;

  constructor(
    @InjectRepository(AccessLogEntry) private readonly entries: Repository<AccessLogEntry>,
  ) {
    this.sql = new PlainSql(entries.manager.connection);
  }

  /** Records a call about to be sent to the bank; returns the row's id, for `complete`. */
  async begin(subject: AccessSubject): Promise<string> {
    const [row] = await this.sql.query<{ id: string }>(
      'access-log:begin',
      `${INSERT_SENT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      sentValues(subject),
    );
    return String(row.id);
  }

  /**
   * As begin, in one statement with a condition (AccessGate): the row's id and the gate's row, or
   * undefined when the gate let nothing through (no row written).
   */
  async beginGated<G>(
    subject: AccessSubject,
    gate: AccessGate,
  ): Promise<{ id: string; gate: G } | undefined> {
    const [row] = await this.sql.query<G & { access_log_id: string }>(
      `access-log:begin:${gate.name}`,
      `WITH ${gate.cte},
       logged AS (
         ${INSERT_SENT} SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM gate RETURNING id
       )
       SELECT gate.*, logged.id AS access_log_id FROM gate, logged`,
      [...sentValues(subject), ...gate.params],
    );
    if (!row) return undefined;
    return { id: String(row.access_log_id), gate: row };
  }

  /**
   * Records the outcome of a call written ahead; a row is completed once (the trigger refuses more).
   * Completions that arrive while one statement is in flight are written together by the next one
   * (a group write: one round-trip for many concurrent calls); each caller still waits for its row.
   */
  complete(id: string, result: AccessOutcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, result, resolve, reject });
      if (!this.writing) void this.writeCompletions();
    });
  }

  private pending: PendingCompletion[] = [];
  private writing = false;

  private async writeCompletions(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_GROUP);
      try {
        await this.sql.query(
          'access-log:complete',
          `UPDATE access_log a
              SET outcome = u.outcome, upstream_status = u.upstream_status, latency_ms = u.latency_ms,
                  completed_at = now()
             FROM unnest($1::bigint[], $2::text[], $3::int[], $4::int[])
                  AS u(id, outcome, upstream_status, latency_ms)
            WHERE a.id = u.id AND a.outcome = '${SENT}'`,
          [
            batch.map((c) => c.id),
            batch.map((c) => c.result.outcome),
            batch.map((c) => c.result.upstreamStatus ?? null),
            batch.map((c) => c.result.latencyMs),
          ],
        );
        for (const c of batch) c.resolve();
      } catch (error) {
        for (const c of batch) c.reject(error);
      }
    }
    this.writing = false;
  }

  /** Records a call that never reached the bank (refused by Portico, or answered from the store). */
  async record(subject: AccessSubject, result: AccessOutcome): Promise<void> {
    await this.entries.query(
      `INSERT INTO access_log
         (tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id,
          outcome, upstream_status, latency_ms, completed_at, card_resource_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), $11)`,
      [
        subject.tenantId,
        subject.consentId ?? null,
        subject.paymentId ?? null,
        subject.operation,
        subject.accountId ?? null,
        subject.psuPresent,
        currentRequestId() ?? null,
        result.outcome,
        result.upstreamStatus ?? null,
        result.latencyMs,
        subject.cardResourceId ?? null,
      ],
    );
  }

  /** A query over the whole log, for the auditor's views. */
  query(alias: string): SelectQueryBuilder<AccessLogEntry> {
    return this.entries.createQueryBuilder(alias);
  }

  forConsent(consentId: string, limit = 500): Promise<AccessLogEntry[]> {
    return this.entries.find({ where: { consentId }, order: { id: 'DESC' }, take: limit });
  }

  forCardResource(cardResourceId: string, limit = 500): Promise<AccessLogEntry[]> {
    return this.entries.find({ where: { cardResourceId }, order: { id: 'DESC' }, take: limit });
  }

  forPayment(paymentId: string, limit = 500): Promise<AccessLogEntry[]> {
    return this.entries.find({ where: { paymentId }, order: { id: 'DESC' }, take: limit });
  }
}

function sentValues(subject: AccessSubject): unknown[] {
  return [
    subject.tenantId,
    subject.consentId ?? null,
    subject.paymentId ?? null,
    subject.operation,
    subject.accountId ?? null,
    subject.psuPresent,
    currentRequestId() ?? null,
    SENT,
    subject.cardResourceId ?? null,
  ];
}
