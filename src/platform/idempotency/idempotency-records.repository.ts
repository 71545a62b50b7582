import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { NO_FLUSH_CTE } from '../database/plain-sql.js';

/** How long a key is remembered (at least; expired rows are swept lazily). */
export const IDEMPOTENCY_RETENTION = '24 hours';
/** An `in_progress` record older than this was left by a crashed attempt and may be taken over. */
export const IDEMPOTENCY_LOCK_TIMEOUT = '60 seconds';
/** Expired rows are deleted this many at a time (an indexed, bounded DELETE). */
const SWEEP_BATCH = 500;

/** A record as the claim reads it back when it could not take the key. */
export interface IdempotencyRecordRow {
  route: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: unknown;
  response_headers: Record<string, string> | null;
  resource: string | null;
  /** Expired, or abandoned by a crash with the same request: a claim may take it over. */
  claimable: boolean;
}

/**
 * The SQL of idempotency records (table `idempotency_records`). A lease is the claim time as
 * PostgreSQL text (microseconds, with offset): the writes that finish an attempt are conditioned on it,
 * so they touch only that attempt's record, not a takeover's.
 */
@Injectable()
export class IdempotencyRecordsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Takes the key when it is absent, expired, or abandoned by a crash with the same request; returns
   * the lease, or undefined when another attempt holds the key. ON CONFLICT locks the existing row and
   * re-checks the WHERE on its latest version, so of two racers one wins.
   */
  async claim(
    tenantId: string,
    key: string,
    route: string,
    fingerprint: string,
  ): Promise<string | undefined> {
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
    return claimed[0]?.lease;
  }

  /** The key's record, with whether a claim with this fingerprint may take it over. */
  async find(
    tenantId: string,
    key: string,
    fingerprint: string,
  ): Promise<IdempotencyRecordRow | undefined> {
    const rows: IdempotencyRecordRow[] = await this.dataSource.query(
      `SELECT route, fingerprint, state, response_status, response_body, response_headers, resource,
                expires_at <= now()
                  OR (state = 'in_progress' AND resource IS NULL AND created_at < now() - interval '${IDEMPOTENCY_LOCK_TIMEOUT}' AND fingerprint = $3) AS claimable
           FROM idempotency_records WHERE tenant_id = $1 AND key = $2`,
      [tenantId, key, fingerprint],
    );
    return rows[0];
  }

  /** Whether the key's attempt is older than the lock timeout (its process crashed). */
  async isAbandoned(tenantId: string, key: string): Promise<boolean> {
    const abandoned: { abandoned: boolean }[] = await this.dataSource.query(
      `SELECT created_at < now() - interval '${IDEMPOTENCY_LOCK_TIMEOUT}' AS abandoned
             FROM idempotency_records WHERE tenant_id = $1 AND key = $2`,
      [tenantId, key],
    );
    return abandoned[0]?.abandoned ?? false;
  }

  /**
   * Stores the answer of the attempt holding `lease`; false when the record is no longer its own.
   * `flush: false`: the commit does not wait for its WAL flush (`synchronous_commit` off for this
   * statement only), for a record bound to its resource, whose repeats answer the resource as it stands
   * when a crash lost the stored answer.
   */
  async complete(
    tenantId: string,
    key: string,
    lease: string,
    response: { status: number; body: string | null; headers: string },
    flush: boolean,
  ): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `${flush ? '' : `WITH ${NO_FLUSH_CTE} `}UPDATE idempotency_records
          SET state = 'completed', response_status = $4, response_body = $5::jsonb, response_headers = $6::jsonb
          ${flush ? '' : 'FROM no_flush '}WHERE tenant_id = $1 AND key = $2 AND state = 'in_progress' AND created_at = $3::timestamptz`,
      [tenantId, key, lease, response.status, response.body, response.headers],
    );
    return affected > 0;
  }

  /** Deletes the record of the attempt holding `lease`. */
  async release(tenantId: string, key: string, lease: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_records
        WHERE tenant_id = $1 AND key = $2 AND state = 'in_progress' AND created_at = $3::timestamptz`,
      [tenantId, key, lease],
    );
  }

  /** Records the resource the attempt holding `lease` wrote. */
  async bind(tenantId: string, key: string, lease: string, resource: string): Promise<void> {
    await this.dataSource.query(
      `WITH ${IdempotencyRecordsRepository.bindCte('bound', 1)} SELECT 1`,
      [tenantId, key, lease, resource],
    );
  }

  /**
   * The bind as a CTE `name` of another statement (the ledger's begin, which writes the resource): its
   * parameters from `$first` are the tenant, the key, the lease and the resource, in that order.
   */
  static bindCte(name: string, first: number): string {
    const [tenant, key, lease, resource] = [0, 1, 2, 3].map((offset) => `$${first + offset}`);
    return `${name} AS (
         UPDATE idempotency_records SET resource = ${resource}
          WHERE tenant_id = ${tenant} AND key = ${key} AND state = 'in_progress' AND created_at = ${lease}::timestamptz)`;
  }

  /** Deletes up to one batch of expired records; returns how many. */
  async deleteExpired(): Promise<number> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM idempotency_records
        WHERE (tenant_id, key) IN (SELECT tenant_id, key FROM idempotency_records WHERE expires_at < now() LIMIT ${SWEEP_BATCH})`,
    );
    return affected;
  }
}
