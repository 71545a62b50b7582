import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, QueryFailedError, type Repository } from 'typeorm';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { ApiKeyCache, KEY_REVOKED_CHANNEL } from './api-key-cache.js';
import { generateKey, hashKey, keyMatches, parseKey } from './api-key-secret.js';
import { ApiKey, type ApiKeyRole } from './api-key.entity.js';
import { assertMayManageRole, maySeeTenant, tenantNotFound, type Actor } from './key-policy.js';
import { Tenant } from './tenant.entity.js';
import { isUuid } from '#src/shared/uuid.js';

export interface IssuedKey {
  apiKey: ApiKey;
  /** The key itself: returned once, never stored. */
  key: string;
}

export interface Principal {
  tenantId: string;
  tenantSlug: string;
  keyId: string;
  role: ApiKeyRole;
}

const UNIQUE_VIOLATION = '23505';

const keyNotFound = (keyId: string) =>
  new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail: `No API key "${keyId}"`,
  });

/**
 * Tenants and their API keys: the one service behind the tenants API, the CLI and authentication.
 * The `…For(actor, …)` methods apply the roles (key-policy.ts); the others are the installation's own (CLI).
 */
@Injectable()
export class TenantsService {
  private readonly createdListeners: ((tenant: Tenant) => Promise<void>)[] = [];

  constructor(
    @InjectRepository(Tenant) private readonly tenants: Repository<Tenant>,
    @InjectRepository(ApiKey) private readonly apiKeys: Repository<ApiKey>,
    private readonly cache: ApiKeyCache,
  ) {}

  /** Runs after each tenant created (the card side gives it a sandbox merchant in sandbox mode). */
  onTenantCreated(listener: (tenant: Tenant) => Promise<void>): void {
    this.createdListeners.push(listener);
  }

  async createTenant(slug: string, name: string): Promise<Tenant> {
    try {
      const tenant = await this.tenants.save(this.tenants.create({ slug, name }));
      for (const listener of this.createdListeners) await listener(tenant);
      return tenant;
    } catch (error) {
      if (
        error instanceof QueryFailedError &&
        (error.driverError as { code?: string }).code === UNIQUE_VIOLATION
      ) {
        throw new ProblemException({
          status: 409,
          type: PROBLEM_TYPES.conflict,
          title: 'Conflict',
          detail: `A tenant with slug "${slug}" already exists`,
        });
      }
      throw error;
    }
  }

  listTenants(): Promise<Tenant[]> {
    return this.tenants.find({ order: { createdAt: 'ASC', slug: 'ASC' } });
  }

  async findTenant(idOrSlug: string): Promise<Tenant> {
    const tenant = await this.tenants.findOne({
      where: isUuid(idOrSlug) ? { id: idOrSlug } : { slug: idOrSlug },
    });
    if (!tenant) throw tenantNotFound(idOrSlug);
    return tenant;
  }

  /** The tenants the actor may see: all of them for an operator, its own for an admin. */
  async listTenantsFor(actor: Actor): Promise<Tenant[]> {
    if (actor.role === 'operator') return this.listTenants();
    return this.tenants.find({ where: { id: actor.tenantId } });
  }

  /** A tenant the actor may manage; another tenant answers 404, exactly as one that does not exist. */
  async findTenantFor(actor: Actor, tenantId: string): Promise<Tenant> {
    if (!maySeeTenant(actor, tenantId)) throw tenantNotFound(tenantId);
    return this.findTenant(tenantId);
  }

  async issueKeyFor(
    actor: Actor,
    tenantId: string,
    role: ApiKeyRole,
    label?: string,
  ): Promise<IssuedKey> {
    const tenant = await this.findTenantFor(actor, tenantId);
    assertMayManageRole(actor, role, 'issue');
    return this.issueKey(tenant.id, role, label);
  }

  async listKeysFor(actor: Actor, tenantId: string): Promise<ApiKey[]> {
    return this.listKeys((await this.findTenantFor(actor, tenantId)).id);
  }

  async revokeKeyFor(actor: Actor, tenantId: string, keyId: string): Promise<ApiKey> {
    const tenant = await this.findTenantFor(actor, tenantId);
    const apiKey = await this.apiKeys.findOne({ where: { id: keyId, tenantId: tenant.id } });
    if (!apiKey) throw keyNotFound(keyId);
    assertMayManageRole(actor, apiKey.role, 'revoke');
    return this.revokeKey(apiKey.id, tenant.id);
  }

  async ensureTenant(slug: string, name: string): Promise<Tenant> {
    await this.tenants.createQueryBuilder().insert().values({ slug, name }).orIgnore().execute();
    return this.findTenant(slug);
  }

  async issueKey(tenantIdOrSlug: string, role: ApiKeyRole, label = ''): Promise<IssuedKey> {
    const tenant = await this.findTenant(tenantIdOrSlug);
    const { key, prefix, secretHash } = generateKey();
    const apiKey = await this.apiKeys.save(
      this.apiKeys.create({
        tenantId: tenant.id,
        prefix,
        secretHash,
        role,
        label,
        lastUsedAt: null,
        revokedAt: null,
      }),
    );
    return { apiKey, key };
  }

  async listKeys(tenantIdOrSlug: string): Promise<ApiKey[]> {
    const tenant = await this.findTenant(tenantIdOrSlug);
    return this.apiKeys.find({ where: { tenantId: tenant.id }, order: { createdAt: 'ASC' } });
  }

  /** Revokes a key; `tenantId` limits the search to one tenant (the admin API path). */
  async revokeKey(keyId: string, tenantId?: string): Promise<ApiKey> {
    const apiKey = await this.apiKeys.findOne({
      where: tenantId ? { id: keyId, tenantId } : { id: keyId },
    });
    if (!apiKey) throw keyNotFound(keyId);
    if (!apiKey.revokedAt) {
      apiKey.revokedAt = new Date();
      await this.apiKeys.update({ id: apiKey.id }, { revokedAt: apiKey.revokedAt });
      await this.announceRevoked([apiKey.id]);
    }
    return apiKey;
  }

  /** Revokes every unrevoked key of a tenant with this label; returns how many. */
  async revokeKeysByLabel(tenantId: string, label: string): Promise<number> {
    const keys = await this.apiKeys.find({ where: { tenantId, label, revokedAt: IsNull() } });
    if (keys.length === 0) return 0;
    const result = await this.apiKeys.update(
      { tenantId, label, revokedAt: IsNull() },
      { revokedAt: new Date() },
    );
    await this.announceRevoked(keys.map((key) => key.id));
    return result.affected ?? 0;
  }

  /** Drops revoked keys from this replica's cache and tells the others (ApiKeyCache). */
  private async announceRevoked(keyIds: string[]): Promise<void> {
    for (const id of keyIds) this.cache.forget(id);
    await this.apiKeys.query(`SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, [
      KEY_REVOKED_CHANNEL,
      keyIds,
    ]);
  }

  /**
   * The principal a presented key stands for, or undefined when it is unknown, wrong or revoked: from
   * the replica's cache of keys it checked recently when it is there (no wait), else from the database.
   */
  authenticate(key: string): Principal | undefined | Promise<Principal | undefined> {
    const parsed = parseKey(key);
    if (!parsed) return undefined;
    // The replica's cache of keys it checked recently (revocations reach it by NOTIFY, bounded by a TTL).
    const hash = hashKey(key);
    const cached = this.cache.get(hash);
    if (cached) return cached as Principal;
    return this.authenticateStored(key, hash, parsed.prefix);
  }

  private async authenticateStored(
    key: string,
    hash: string,
    prefix: string,
  ): Promise<Principal | undefined> {
    // One indexed read on the hot path (no ORM relation loading).
    const rows: {
      id: string;
      tenant_id: string;
      role: ApiKeyRole;
      secret_hash: string;
      slug: string;
    }[] = await this.apiKeys.query(
      `SELECT k.id, k.tenant_id, k.role, k.secret_hash, t.slug
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.prefix = $1 AND k.revoked_at IS NULL`,
      [prefix],
    );
    const row = rows[0];
    if (!row || !keyMatches(key, row.secret_hash)) return undefined;
    const principal = {
      tenantId: row.tenant_id,
      tenantSlug: row.slug,
      keyId: row.id,
      role: row.role,
    };
    this.cache.set(hash, principal);
    return principal;
  }
}
