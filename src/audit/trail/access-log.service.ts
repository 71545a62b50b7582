import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository, SelectQueryBuilder } from 'typeorm';
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
 * Writes the audit trail of every call made under a consent or a payment. A call to the bank is
 * written ahead (`begin`, outcome `sent`) and completed after (`complete`), so that a crash between
 * the two leaves a row saying the call was sent with its outcome unknown; a call Portico refused
 * itself is one row (`record`).
 */
@Injectable()
export class AccessLogService {
  constructor(
    @InjectRepository(AccessLogEntry) private readonly entries: Repository<AccessLogEntry>,
  ) {}

  /** Records a call about to be sent to the bank; returns the row's id, for `complete`. */
  async begin(subject: AccessSubject): Promise<string> {
    const [row] = (await this.entries.query(
      `INSERT INTO access_log
         (tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id, outcome,
          card_resource_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [
        subject.tenantId,
        subject.consentId ?? null,
        subject.paymentId ?? null,
        subject.operation,
        subject.accountId ?? null,
        subject.psuPresent,
        currentRequestId() ?? null,
        SENT,
        subject.cardResourceId ?? null,
      ],
    )) as { id: string }[];
    return String(row.id);
  }

  /** Records the outcome of a call written ahead; a row is completed once (the trigger refuses more). */
  async complete(id: string, result: AccessOutcome): Promise<void> {
    await this.entries.query(
      `UPDATE access_log SET outcome = $2, upstream_status = $3, latency_ms = $4, completed_at = now()
       WHERE id = $1 AND outcome = '${SENT}'`,
      [id, result.outcome, result.upstreamStatus ?? null, result.latencyMs],
    );
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
