import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ApiKeysRepository, type RateLimitRow } from '../tenants/api-keys.repository.js';

export type { RateLimitRow } from '../tenants/api-keys.repository.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  exceeded: boolean;
}

/**
 * A fixed one-minute window per API key, counted in PostgreSQL so that N replicas share one budget
 * (ApiKeysRepository: the same statement records the key's last use, at most one write a minute).
 */
@Injectable()
export class RateLimitService {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async consume(keyId: string): Promise<RateLimitState> {
    return this.counted(keyId, await this.apiKeys.countUse(keyId));
  }

  /** The requests a key may make a minute. */
  get perMinute(): number {
    return this.config.http.rateLimitPerMinute;
  }

  /** The state after a request was counted (by consume, or by a statement built with ApiKeysRepository.usageCte). */
  async counted(keyId: string, row: RateLimitRow): Promise<RateLimitState> {
    const limit = this.perMinute;
    const count = row.rate_count;
    // First request of a new window: drop this key's finished windows.
    if (count === 1) await this.apiKeys.pruneUse(keyId);
    return {
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, row.rate_reset_seconds),
      exceeded: count > limit,
    };
  }
}
