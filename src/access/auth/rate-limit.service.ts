import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { PlainSql } from '#src/platform/database/plain-sql.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  exceeded: boolean;
}

const WINDOW_SECONDS = 60;

/** What the rate-limit part of a statement returns (see RateLimitService.cte). */
export interface RateLimitRow {
  rate_count: number;
  rate_reset_seconds: number;
}

/**
 * A fixed one-minute window per API key, counted in PostgreSQL so that N replicas share one budget.
 * The same statement records the key's last use (at most one write a minute).
 */
@Injectable()
export class RateLimitService {
  private readonly sql: PlainSql;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.sql = new PlainSql(dataSource);
  }

  /**
   * The CTEs that count one request of the key whose id is the parameter `keyParam`, for a statement
   * that does more in the same round-trip (the consent-access admission): they define `rate_usage`,
   * one row of RateLimitRow.
   */
  static cte(keyParam: string): string {
    return `rate_touched AS (
         UPDATE api_keys SET last_used_at = now()
          WHERE id = ${keyParam} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
       ),
       rate_usage AS (
         INSERT INTO api_key_usage (key_id, window_start, count) VALUES (${keyParam}, date_trunc('minute', now()), 1)
         ON CONFLICT (key_id, window_start) DO UPDATE SET count = api_key_usage.count + 1
         RETURNING count AS rate_count,
                   ceil(extract(epoch FROM (window_start + interval '${WINDOW_SECONDS} seconds' - now())))::int AS rate_reset_seconds
       )`;
  }

  /**
   * As cte, for a group of requests counted in one statement: given a CTE `from` with a `key_id` and
   * an `ord` column (one row per request), defines `rate_usage` with one row per request (its
   * `ord`, and RateLimitRow as if the requests had been counted one by one in `ord` order). The keys
   * are counted in key order, so that two such statements never wait on each other in a cycle, and a
   * key's last use is recorded only when no one else is recording it.
   */
  static groupCte(from: string): string {
    return `rate_keys AS (SELECT key_id, count(*)::int AS n FROM ${from} GROUP BY key_id),
       rate_touched AS (
         UPDATE api_keys SET last_used_at = now()
          WHERE id IN (SELECT id FROM api_keys
                        WHERE id IN (SELECT key_id FROM rate_keys)
                          AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
                          FOR UPDATE SKIP LOCKED)
       ),
       rate_totals AS (
         INSERT INTO api_key_usage (key_id, window_start, count)
         SELECT key_id, date_trunc('minute', now()), n FROM rate_keys ORDER BY key_id
         ON CONFLICT (key_id, window_start) DO UPDATE SET count = api_key_usage.count + excluded.count
         RETURNING key_id, count AS total,
                   ceil(extract(epoch FROM (window_start + interval '${WINDOW_SECONDS} seconds' - now())))::int AS rate_reset_seconds
       ),
       rate_usage AS (
         SELECT r.ord, (t.total - k.n + row_number() OVER (PARTITION BY r.key_id ORDER BY r.ord))::int AS rate_count,
                t.rate_reset_seconds
           FROM ${from} r JOIN rate_keys k ON k.key_id = r.key_id JOIN rate_totals t ON t.key_id = r.key_id
       )`;
  }

  async consume(keyId: string): Promise<RateLimitState> {
    const rows = await this.sql.query<RateLimitRow>(
      'rate-limit:consume',
      `WITH ${RateLimitService.cte('$1')} SELECT rate_count, rate_reset_seconds FROM rate_usage`,
      [keyId],
    );
    return this.counted(keyId, rows[0]);
  }

  /** The requests a key may make a minute. */
  get perMinute(): number {
    return this.config.http.rateLimitPerMinute;
  }

  /** The state after a request was counted (by consume, or by a statement built with cte). */
  async counted(keyId: string, row: RateLimitRow): Promise<RateLimitState> {
    const limit = this.perMinute;
    const count = row.rate_count;
    if (count === 1) {
      // First request of a new window: drop this key's finished windows.
      await this.sql.query(
        'rate-limit:prune',
        `DELETE FROM api_key_usage WHERE key_id = $1 AND window_start < date_trunc('minute', now())`,
        [keyId],
      );
    }
    return {
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, row.rate_reset_seconds),
      exceeded: count > limit,
    };
  }
}
