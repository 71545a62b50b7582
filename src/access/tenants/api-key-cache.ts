import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type pg from 'pg';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { DatabaseClient } from '#src/shared/database-client.js';
import { ExpiringMap } from '#src/platform/common/expiring-map.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { ApiKeysRepository, KEY_REVOKED_CHANNEL } from './api-keys.repository.js';

/** What the cache holds for a key: the principal it stands for. */
export interface CachedPrincipal {
  tenantId: string;
  tenantSlug: string;
  keyId: string;
  role: string;
}

const RECONNECT_MS = 1000;
/** How often revocations are also looked for in the table (the notice's fallback), at most. */
const POLL_MS = 1000;
/** How far back each poll looks past the previous one: revoked_at comes from the revoking replica's clock. */
const POLL_OVERLAP_MS = 10_000;
/** Keys remembered at most; beyond, the oldest go (an attacker's many keys never reach the cache: only valid ones do). */
const MAX_ENTRIES = 10_000;

/**
 * The keys this replica authenticated recently, by the SHA-256 of the presented key (never the key).
 * A revocation on any replica is announced with NOTIFY and drops the key here at once; should the
 * notice be lost (connection down, a revocation made with plain SQL), an entry is trusted at most
 * KEY_CACHE_TTL_MS before the key's row is read again, and a lost listening connection empties the cache.
 * Besides, every second (or TTL, if shorter) the replica reads the keys revoked lately and forgets them:
 * the embedded engine delivers no notices, and a notice lost on a live connection is caught there.
 * So a revoked key stops at once on the replica that revoked it, within about a second on the others,
 * and in any case within KEY_CACHE_TTL_MS.
 */
@Injectable()
export class ApiKeyCache implements OnModuleInit, OnModuleDestroy {
  private readonly entries = new ExpiringMap<string, CachedPrincipal>(MAX_ENTRIES);
  private listener?: pg.Client;
  private reconnect?: NodeJS.Timeout;
  private poller?: NodeJS.Timeout;
  private closed = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly apiKeys: ApiKeysRepository,
  ) {}

  get ttlMs(): number {
    return this.config.http.keyCacheTtlMs;
  }

  get(hash: string): CachedPrincipal | undefined {
    return this.entries.get(hash);
  }

  set(hash: string, principal: CachedPrincipal): void {
    this.entries.set(hash, principal, this.ttlMs);
  }

  /** Forgets a key (revoked here, or announced as revoked by another replica). */
  forget(keyId: string): void {
    this.entries.deleteWhere((principal) => principal.keyId === keyId);
  }

  clear(): void {
    this.entries.clear();
  }

  async onModuleInit(): Promise<void> {
    if (this.ttlMs === 0) return;
    await this.listen();
    this.schedulePoll(new Date(Date.now() - POLL_OVERLAP_MS));
  }

  onModuleDestroy(): void {
    this.closed = true;
    clearTimeout(this.reconnect);
    clearTimeout(this.poller);
    // Not awaited: shutdown goes on to close the listeners at once (in-flight requests still finish).
    void this.listener?.end().catch(() => undefined);
  }

  /** Forgets the keys revoked since `since`; then again, from a little before this poll. */
  private schedulePoll(since: Date): void {
    this.poller = setTimeout(
      () => {
        const next = new Date(Date.now() - POLL_OVERLAP_MS);
        // Only when something is cached: an idle replica sends nothing.
        const poll =
          this.entries.size === 0
            ? Promise.resolve()
            : this.apiKeys.revokedSince(since).then((ids) => ids.forEach((id) => this.forget(id)));
        void poll.then(
          () => this.schedulePoll(next),
          () => {
            // The table could not be read: trust nothing cached until it can.
            this.clear();
            this.schedulePoll(since);
          },
        );
      },
      Math.min(POLL_MS, this.ttlMs),
    );
    this.poller.unref();
  }

  private async listen(): Promise<void> {
    if (this.closed || !this.config.database.url) return;
    const client = new DatabaseClient({ connectionString: this.config.database.url });
    const lost = (error?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      // Notices may have been missed meanwhile: trust nothing cached before the connection is back.
      this.clear();
      if (this.closed) return;
      if (error) this.logger.warn({ err: error }, 'key revocation listener lost; reconnecting');
      this.reconnect = setTimeout(() => void this.listen(), RECONNECT_MS);
      this.reconnect.unref();
    };
    client.on('notification', (message) => {
      if (message.channel === KEY_REVOKED_CHANNEL && message.payload) this.forget(message.payload);
    });
    client.on('error', lost);
    client.on('end', () => lost());
    this.listener = client;
    try {
      await this.apiKeys.listenForRevocations(client);
      this.clear();
    } catch (error) {
      await client.end().catch(() => undefined);
      lost(error as Error);
    }
  }
}
