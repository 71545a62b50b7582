import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { currentRequestId } from '../../platform/logging/request-context.js';
import { AccessLogEntry } from './access-log-entry.entity.js';

export type AccessRecord = Pick<
  AccessLogEntry,
  'tenantId' | 'operation' | 'psuPresent' | 'outcome' | 'latencyMs'
> &
  Partial<Pick<AccessLogEntry, 'consentId' | 'paymentId' | 'accountId' | 'upstreamStatus'>>;

/** Writes the audit trail of every call made under a consent or a payment. */
@Injectable()
export class AccessLogService {
  constructor(
    @InjectRepository(AccessLogEntry) private readonly entries: Repository<AccessLogEntry>,
  ) {}

  async record(entry: AccessRecord): Promise<void> {
    await this.entries.insert({
      consentId: null,
      paymentId: null,
      accountId: null,
      upstreamStatus: null,
      ...entry,
      requestId: currentRequestId() ?? null,
    });
  }

  forConsent(consentId: string, limit = 500): Promise<AccessLogEntry[]> {
    return this.entries.find({ where: { consentId }, order: { id: 'DESC' }, take: limit });
  }

  forPayment(paymentId: string, limit = 500): Promise<AccessLogEntry[]> {
    return this.entries.find({ where: { paymentId }, order: { id: 'DESC' }, take: limit });
  }
}
