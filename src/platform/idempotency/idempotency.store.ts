import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { LOGGER } from '../logging/logging.module.js';

/** How long a key is remembered (at least; expired rows are swept lazily). */
export const IDEMPOTENCY_RETENTION = '24 hours';
/** An `in_progress` record older than this was left by a crashed attempt and may be taken over. */
export const IDEMPOTENCY_LOCK_TIMEOUT = '60 seconds';
/** Expired rows are deleted at most this often per process, this many at a time (an indexed, bounded DELETE). */
const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 500;
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

interface RecordRow {
  route: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: unknown;
  response_headers: Record<string, string> | null;
  resource: string | null;
  claimable: boolean;
}

/**
 * Idempotency records in PostgreSQL, shared by every replica. Every state change is one statement
 * conditioned on the row it expects, so concurrent requests and replicas cannot both win a key.
 * Errors are not caught here: the interceptor turns them into 503 (fail closed).
 */
@Injectable()
export class IdempotencyStore {
  private nextSweepAt = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async claim(
    tenantId: string,
    key: string,
    route: string,
    fingerprint: string,
  ): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      // Absent, expired, or abandoned by a crash with the same request: this attempt owns the key now.
      // ON CONFLICT locks the existing row and re-checks the WHERE on its latest version, so of two racers one wins.
      const claimed: { lease: string }[] = await this.dataSource.query(
        `INSERT INTO idempotency_records AS r (tenant_id, key, route, fingerprint, state, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'in_progress', now(), now() + interval '${IDEMPOTENCY_RETENTION}')
         ON CONFLICT (tenant_id, key) DO UPDATE
            SET route = EXCLUDED.route, fingerprint = EXCLUDED.fingerprint, state = 'in_progress',
                response_status = NULL, response_body = NULL, response_headers = NULL, resource = NULL,
                created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
          WHERE r.expires_at <= now()
             OR (r.state = 'in_progress' AND r.resource IS NULL AND r.created_at < now() - interval '${IDEMPOTENCY_LOCK_TIMEOUT}' AND r.fingerprint = EXCLUDED.fingerprint)
         RETURNING r.created_at::text AS lease`,
        [tenantId, key, route, fingerprint],
      );
      if (claimed.length > 0) {
        await this.sweepOccasionally();
        return { outcome: 'claimed', lease: claimed[0].lease };
      }
      const rows: RecordRow[] = await this.dataSource.query(
        `SELECT route, fingerprint, state, response_status, response_body, response_headers, resource,
                expires_at <= now()
                  OR (state = 'in_progress' AND resource IS NULL AND created_at < now() - interval '${IDEMPOTENCY_LOCK_TIMEOUT}' AND fingerprint = $3) AS claimable
           FROM idempotency_records WHERE tenant_id = $1 AND key = $2`,
        [tenantId, key, fingerprint],
      );
      const row = rows[0];
      // Released (a 5xx), expired or abandoned since the INSERT looked: claim again.
      if (!row || row.claimable) continue;
      if (row.fingerprint !== fingerprint) return { outcome: 'mismatch', route: row.route };
      if (row.state === 'in_progress' && row.resource !== null) {
        const abandoned: { abandoned: boolean }[] = await this.dataSource.query(
          `SELECT created_at < now() - interval '${IDEMPOTENCY_LOCK_TIMEOUT}' AS abandoned
             FROM idempotency_records WHERE tenant_id = $1 AND key = $2`,
          [tenantId, key],
        );
        if (abandoned[0]?.abandoned) return { outcome: 'bound', resource: row.resource };
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

  /** Stores the answer of the attempt holding `lease`; false when the record is no longer its own. */
  async complete(
    tenantId: string,
    key: string,
    lease: string,
    response: StoredResponse,
  ): Promise<boolean> {
    const body = response.body === undefined ? null : JSON.stringify(response.body);
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE idempotency_records
          SET state = 'completed', response_status = $4, response_body = $5::jsonb, response_headers = $6::jsonb
        WHERE tenant_id = $1 AND key = $2 AND state = 'in_progress' AND created_at = $3::timestamptz`,
      [tenantId, key, lease, response.status, body, JSON.stringify(response.headers)],
    );
    return affected > 0;
  }

  /** Frees the key for a retry (the operation certainly did not happen). */
  async release(tenantId: string, key: string, lease: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_records
        WHERE tenant_id = $1 AND key = $2 AND state = 'in_progress' AND created_at = $3::timestamptz`,
      [tenantId, key, lease],
    );
  }

  /** Binds the key to the resource the request wrote, before the provider is called. */
  async bind(tenantId: string, key: string, lease: string, resource: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_records SET resource = $4
        WHERE tenant_id = $1 AND key = $2 AND state = 'in_progress' AND created_at = $3::timestamptz`,
      [tenantId, key, lease, resource],
    );
  }

  /** Deletes up to one batch of expired records; returns how many. */
  async sweepExpired(): Promise<number> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM idempotency_records
        WHERE (tenant_id, key) IN (SELECT tenant_id, key FROM idempotency_records WHERE expires_at < now() LIMIT ${SWEEP_BATCH})`,
    );
    return affected;
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
