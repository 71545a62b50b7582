import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../platform/config/app-config.js';
import { APP_CONFIG } from '../../platform/config/config.module.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  exceeded: boolean;
}

export const RATE_LIMIT_HEADERS = {
  limit: 'RateLimit-Limit',
  remaining: 'RateLimit-Remaining',
  reset: 'RateLimit-Reset',
} as const;

const WINDOW_SECONDS = 60;

/**
 * A fixed one-minute window per API key, counted in PostgreSQL so that N replicas share one budget.
 * The same statement records the key's last use (at most one write a minute).
 */
@Injectable()
export class RateLimitService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async consume(keyId: string): Promise<RateLimitState> {
    const limit = this.config.http.rateLimitPerMinute;
    const rows: { count: number; reset_seconds: number }[] = await this.dataSource.query(
      `WITH touched AS (
         UPDATE api_keys SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
       )
       INSERT INTO api_key_usage (key_id, window_start, count) VALUES ($1, date_trunc('minute', now()), 1)
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = api_key_usage.count + 1
       RETURNING count, ceil(extract(epoch FROM (window_start + interval '${WINDOW_SECONDS} seconds' - now())))::int AS reset_seconds`,
      [keyId],
    );
    const { count, reset_seconds: resetSeconds } = rows[0];
    if (count === 1) {
      // First request of a new window: drop this key's finished windows.
      await this.dataSource.query(
        `DELETE FROM api_key_usage WHERE key_id = $1 AND window_start < date_trunc('minute', now())`,
        [keyId],
      );
    }
    return {
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, resetSeconds),
      exceeded: count > limit,
    };
  }
}
