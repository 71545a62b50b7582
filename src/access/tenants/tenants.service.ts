import { Injectable } from '@nestjs/common';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { ApiKeyCache } from './api-key-cache.js';
import { generateKey, hashKey, keyMatches, parseKey } from './api-key-secret.js';
import type { ApiKey, ApiKeyRole } from './api-key.entity.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { assertMayManageRole, maySeeTenant, tenantNotFound, type Actor } from './key-policy.js';
import type { Tenant } from './tenant.entity.js';
import { isUniqueViolation, TenantsRepository } from './tenants.repository.js';

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
    private readonly tenants: TenantsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly cache: ApiKeyCache,
  ) {}

  /** Runs after each tenant created (the card side gives it a sandbox merchant in sandbox mode). */
  onTenantCreated(listener: (tenant: Tenant) => Promise<void>): void {
    this.createdListeners.push(listener);
  }

  async createTenant(slug: string, name: string): Promise<Tenant> {
    try {
      const tenant = await this.tenants.insert(slug, name);
      for (const listener of this.createdListeners) await listener(tenant);
      return tenant;
    } catch (error) {
      if (isUniqueViolation(error)) {
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
    return this.tenants.list();
  }

  async findTenant(idOrSlug: string): Promise<Tenant> {
    const tenant = await this.tenants.findByIdOrSlug(idOrSlug);
    if (!tenant) throw tenantNotFound(idOrSlug);
    return tenant;
  }

  /** The tenants the actor may see: all of them for an operator, its own for an admin. */
  async listTenantsFor(actor: Actor): Promise<Tenant[]> {
    if (actor.role === 'operator') return this.listTenants();
    return this.tenants.listById(actor.tenantId);
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
    const apiKey = await this.apiKeys.find(keyId, tenant.id);
    if (!apiKey) throw keyNotFound(keyId);
    assertMayManageRole(actor, apiKey.role, 'revoke');
    return this.revokeKey(apiKey.id, tenant.id);
  }

  async ensureTenant(slug: string, name: string): Promise<Tenant> {
    await this.tenants.insertUnlessExists(slug, name);
    return this.findTenant(slug);
  }

  async issueKey(tenantIdOrSlug: string, role: ApiKeyRole, label = ''): Promise<IssuedKey> {
    const tenant = await this.findTenant(tenantIdOrSlug);
    const { key, prefix, secretHash } = generateKey();
    const apiKey = await this.apiKeys.insert({
      tenantId: tenant.id,
      prefix,
      secretHash,
      role,
      label,
      lastUsedAt: null,
      revokedAt: null,
    });
    return { apiKey, key };
  }

  async listKeys(tenantIdOrSlug: string): Promise<ApiKey[]> {
    const tenant = await this.findTenant(tenantIdOrSlug);
    return this.apiKeys.listOfTenant(tenant.id);
  }

  /** Revokes a key; `tenantId` limits the search to one tenant (the admin API path). */
  async revokeKey(keyId: string, tenantId?: string): Promise<ApiKey> {
    const apiKey = await this.apiKeys.find(keyId, tenantId);
    if (!apiKey) throw keyNotFound(keyId);
    if (!apiKey.revokedAt) {
      apiKey.revokedAt = new Date();
      await this.apiKeys.revoke(apiKey.id, apiKey.revokedAt);
      await this.announceRevoked([apiKey.id]);
    }
    return apiKey;
  }

  /** Revokes every unrevoked key of a tenant with this label; returns how many. */
  async revokeKeysByLabel(tenantId: string, label: string): Promise<number> {
    const keys = await this.apiKeys.listUnrevokedByLabel(tenantId, label);
    if (keys.length === 0) return 0;
    const revoked = await this.apiKeys.revokeByLabel(tenantId, label, new Date());
    await this.announceRevoked(keys.map((key) => key.id));
    return revoked;
  }

  /** Drops revoked keys from this replica's cache and tells the others (ApiKeyCache). */
  private async announceRevoked(keyIds: string[]): Promise<void> {
    for (const id of keyIds) this.cache.forget(id);
    await this.apiKeys.announceRevoked(keyIds);
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
    const row = await this.apiKeys.findActiveByPrefix(prefix);
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
