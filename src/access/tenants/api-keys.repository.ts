import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type pg from 'pg';
import { IsNull, type DataSource, type Repository } from 'typeorm';
import { NO_FLUSH_CTE, PlainSql } from '#src/platform/database/plain-sql.js';
import { StatementGroup } from '#src/platform/database/statement-group.js';
import { ApiKey, type ApiKeyRole } from './api-key.entity.js';

/** The PostgreSQL channel on which a replica announces a revoked key (payload: the key's id). */
export const KEY_REVOKED_CHANNEL = 'portico_api_key_revoked';

const WINDOW_SECONDS = 60;

/** What the rate-limit part of a statement returns (see ApiKeysRepository.usageCte). */
export interface RateLimitRow {
  rate_count: number;
  rate_reset_seconds: number;
}

/** An unrevoked key found by its prefix, with its tenant's slug (the authentication read). */
export interface ActiveKeyRow {
  id: string;
  tenant_id: string;
  role: ApiKeyRole;
  secret_hash: string;
  slug: string;
}

/**
 * The SQL of API keys (table `api_keys`) and of their use (table `api_key_usage`: the requests a key
 * made per one-minute window, counted in PostgreSQL so that N replicas share one budget).
 */
@Injectable()
export class ApiKeysRepository {
  private readonly sql: PlainSql;

  constructor(
    @InjectRepository(ApiKey) private readonly rows: Repository<ApiKey>,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.sql = new PlainSql(dataSource);
  }

  insert(key: Omit<ApiKey, 'id' | 'createdAt' | 'tenant'>): Promise<ApiKey> {
    return this.rows.save(this.rows.create(key));
  }

  /** A tenant's keys, oldest first. */
  listOfTenant(tenantId: string): Promise<ApiKey[]> {
    return this.rows.find({ where: { tenantId }, order: { createdAt: 'ASC' } });
  }

  /** A key by its id; with `tenantId`, only that tenant's. */
  find(keyId: string, tenantId?: string): Promise<ApiKey | null> {
    return this.rows.findOne({ where: tenantId ? { id: keyId, tenantId } : { id: keyId } });
  }

  async revoke(keyId: string, at: Date): Promise<void> {
    await this.rows.update({ id: keyId }, { revokedAt: at });
  }

  /** A tenant's unrevoked keys with this label. */
  listUnrevokedByLabel(tenantId: string, label: string): Promise<ApiKey[]> {
    return this.rows.find({ where: { tenantId, label, revokedAt: IsNull() } });
  }

  /** Revokes a tenant's unrevoked keys with this label; returns how many. */
  async revokeByLabel(tenantId: string, label: string, at: Date): Promise<number> {
    const result = await this.rows.update(
      { tenantId, label, revokedAt: IsNull() },
      { revokedAt: at },
    );
    return result.affected ?? 0;
  }

  /** Tells every replica listening on KEY_REVOKED_CHANNEL that these keys are revoked. */
  async announceRevoked(keyIds: string[]): Promise<void> {
    await this.rows.query(`SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, [
      KEY_REVOKED_CHANNEL,
      keyIds,
    ]);
  }

  /** Connects a client of its own and listens on KEY_REVOKED_CHANNEL. */
  async listenForRevocations(client: pg.Client): Promise<void> {
    await client.connect();
    await client.query(`LISTEN ${KEY_REVOKED_CHANNEL}`);
  }

  /** The ids of the keys revoked after `since`. */
  async revokedSince(since: Date): Promise<string[]> {
    const rows = (await this.rows.query(`SELECT id FROM api_keys WHERE revoked_at > $1`, [
      since,
    ])) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /** The unrevoked key with this prefix, if any: one indexed read on the hot path (no ORM relation loading). */
  async findActiveByPrefix(prefix: string): Promise<ActiveKeyRow | undefined> {
    const rows: ActiveKeyRow[] = await this.rows.query(
      `SELECT k.id, k.tenant_id, k.role, k.secret_hash, t.slug
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.prefix = $1 AND k.revoked_at IS NULL`,
      [prefix],
    );
    return rows[0];
  }

  /**
   * The CTEs that count one request of the key whose id is the parameter `keyParam`, for a statement
   * that does more in the same round-trip (the consent-access admission): they define `rate_usage`,
   * one row of RateLimitRow. The same statement records the key's last use (at most one write a minute).
   */
  static usageCte(keyParam: string): string {
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
   * As usageCte, for a group of requests counted in one statement: given a CTE `from` with a `key_id`
   * and an `ord` column (one row per request), defines `rate_usage` with one row per request (its
   * `ord`, and RateLimitRow as if the requests had been counted one by one in `ord` order). The keys
   * are counted in key order, so that two such statements never wait on each other in a cycle, and a
   * key's last use is recorded only when no one else is recording it.
   */
  static groupUsageCte(from: string): string {
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

  /**
   * Counts one request of the key in the current window. Requests counted while one statement is in
   * flight are counted together by the next one (a group write, StatementGroup: one round-trip for many
   * concurrent requests, each answered its own count as if counted one by one); a lone request goes at
   * once, with the one-key statement. Its commit does not wait for the WAL flush (`synchronous_commit`
   * off for this statement's transaction only): a crash loses at most the last fraction of a second of
   * counts (a few more requests allowed), never a row of the trail, and the request saves a flush
   * (0.3 → 0.15 ms p50, 1.7 → 0.2 ms p90 on this machine's disk).
   */
  countUse(keyId: string): Promise<RateLimitRow> {
    return this.counting.run(keyId);
  }

  private readonly counting = new StatementGroup<string, RateLimitRow>(
    (keyIds) =>
      keyIds.length === 1
        ? this.sql.query<RateLimitRow>(
            'rate-limit:consume',
            `WITH ${NO_FLUSH_CTE},
                  ${ApiKeysRepository.usageCte('$1')}
             SELECT rate_count, rate_reset_seconds FROM rate_usage, no_flush`,
            keyIds,
          )
        : this.sql.query<RateLimitRow>(
            'rate-limit:consume-group',
            `WITH ${NO_FLUSH_CTE},
                  calls AS (SELECT * FROM unnest($1::uuid[]) WITH ORDINALITY AS r(key_id, ord)),
                  ${ApiKeysRepository.groupUsageCte('calls')}
             SELECT rate_count, rate_reset_seconds FROM rate_usage, no_flush ORDER BY ord`,
            [keyIds],
          ),
    'rate-limit:consume',
  );

  /** Drops the key's finished windows. */
  async pruneUse(keyId: string): Promise<void> {
    await this.sql.query(
      'rate-limit:prune',
      `DELETE FROM api_key_usage WHERE key_id = $1 AND window_start < date_trunc('minute', now())`,
      [keyId],
    );
  }
}
