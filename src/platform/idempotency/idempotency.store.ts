import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../logging/logging.module.js';
import { IdempotencyRecordsRepository } from './idempotency-records.repository.js';

/** Expired rows are deleted at most this often per process (a batch at a time, see the repository). */
const SWEEP_INTERVAL_MS = 60_000;
/** A claim can lose races to a release or an expiry between its two statements; it tries again this often. */
const CLAIM_ATTEMPTS = 3;

export interface StoredResponse {
  status: number;
  /** The JSON body; undefined when the answer had none. */
  body: unknown;
  headers: Record<string, string>;
}

/**
 * What a request with a key may do. `claimed` carries the lease: the claim time as PostgreSQL text
 * (microseconds, with offset), so that finishing touches only this attempt's record, not a takeover's.
 */
export type ClaimOutcome =
  | { outcome: 'claimed'; lease: string }
  /** `resource`: the one it wrote, when it has (see bindIdempotentResource). */
  | { outcome: 'in-progress'; resource?: string }
  | { outcome: 'mismatch'; route: string }
  | { outcome: 'completed'; response: StoredResponse; resource?: string }
  /** Abandoned (a crash) after it wrote its resource: not run again. */
  | { outcome: 'bound'; resource: string };

/**
 * Idempotency records in PostgreSQL, shared by every replica. Every state change is one statement
 * conditioned on the row it expects, so concurrent requests and replicas cannot both win a key.
 * Errors are not caught here: the interceptor turns them into 503 (fail closed).
 */
@Injectable()
export class IdempotencyStore {
  private nextSweepAt = 0;

  constructor(
    private readonly records: IdempotencyRecordsRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async claim(
    tenantId: string,
    key: string,
    route: string,
    fingerprint: string,
  ): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const lease = await this.records.claim(tenantId, key, route, fingerprint);
      if (lease !== undefined) {
        await this.sweepOccasionally();
        return { outcome: 'claimed', lease };
      }
      const row = await this.records.find(tenantId, key, fingerprint);
      // Released (a 5xx), expired or abandoned since the INSERT looked: claim again.
      if (!row || row.claimable) continue;
      if (row.fingerprint !== fingerprint) return { outcome: 'mismatch', route: row.route };
      if (row.state === 'in_progress' && row.resource !== null) {
        if (await this.records.isAbandoned(tenantId, key))
          return { outcome: 'bound', resource: row.resource };
      }
      const resource = row.resource ?? undefined;
      if (row.state === 'in_progress') return { outcome: 'in-progress', resource };
      return {
        outcome: 'completed',
        resource,
        response: {
          status: row.response_status ?? 200,
          body: row.response_body ?? undefined,
          headers: row.response_headers ?? {},
        },
      };
    }
    return { outcome: 'in-progress' };
  }

  /**
   * Stores the answer of the attempt holding `lease`; false when the record is no longer its own. The
   * answer of a key `bound` to its resource is not waited on to reach the disk: a crash that lost it
   * leaves the record bound, and a repeat answers the resource as it stands (the interceptor's repeat).
   */
  complete(
    tenantId: string,
    key: string,
    lease: string,
    response: StoredResponse,
    bound: boolean,
  ): Promise<boolean> {
    const body = response.body === undefined ? null : JSON.stringify(response.body);
    return this.records.complete(
      tenantId,
      key,
      lease,
      { status: response.status, body, headers: JSON.stringify(response.headers) },
      !bound,
    );
  }

  /** Frees the key for a retry (the operation certainly did not happen). */
  release(tenantId: string, key: string, lease: string): Promise<void> {
    return this.records.release(tenantId, key, lease);
  }

  /** Binds the key to the resource the request wrote, before the provider is called. */
  bind(tenantId: string, key: string, lease: string, resource: string): Promise<void> {
    return this.records.bind(tenantId, key, lease, resource);
  }

  /** Deletes up to one batch of expired records; returns how many. */
  sweepExpired(): Promise<number> {
    return this.records.deleteExpired();
  }

  /** Expired rows already count as absent, so sweeping is only housekeeping: its failure must not fail a request. */
  private async sweepOccasionally(): Promise<void> {
    if (Date.now() < this.nextSweepAt) return;
    this.nextSweepAt = Date.now() + SWEEP_INTERVAL_MS;
    try {
      const swept = await this.sweepExpired();
      if (swept > 0) this.logger.debug({ swept }, 'swept expired idempotency records');
    } catch (error) {
      this.logger.warn({ err: error }, 'sweeping expired idempotency records failed');
    }
  }
}
