import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Tenant } from '../tenants/tenant.entity.js';
import { TenantsService } from '../tenants/tenants.service.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { ExpiringMap } from '#src/platform/common/expiring-map.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { MerchantCredentialsRepository } from './merchant-credentials.repository.js';
import { SecretsService } from '#src/platform/secrets/secrets.service.js';
import type { SealedTable } from '#src/platform/secrets/secrets-reseal.service.js';
import type { CardCredentials } from './card-credentials.entity.js';
import { maskKey } from './mask-key.js';

export interface MerchantKeys {
  secretKey: string;
  publicKey?: string;
  posKey?: string;
}

export const CARD_CREDENTIALS_MISSING = 'urn:portico:problem:card-credentials-missing';
export const CARD_CREDENTIALS_UNREADABLE = 'urn:portico:problem:card-credentials-unreadable';

type KeyField = 'secretKey' | 'publicKey' | 'posKey';

const FIELD_OF_COLUMN: Record<string, KeyField> = {
  secret_key_sealed: 'secretKey',
  public_key_sealed: 'publicKey',
  pos_key_sealed: 'posKey',
};

/** The sealed merchant keys, for the re-seal after a SECRETS_KEY rotation (bound to tenant and field). */
export const CARD_SEALED_KEYS: SealedTable = {
  table: 'card_credentials',
  idColumn: 'tenant_id',
  columns: Object.keys(FIELD_OF_COLUMN),
  context: (tenantId, column) => `${tenantId}:${FIELD_OF_COLUMN[column]}`,
};

/** What an operator (or anyone) is shown of a tenant's merchant keys: never the keys. */
export interface MaskedCredentials {
  tenantId: string;
  secretKey: string;
  publicKey: string | null;
  posKey: string | null;
  source: string;
  merchantId: string | null;
  updatedAt: Date;
}

/** Sealed rows remembered at most; beyond, the oldest go. */
const MAX_CACHED = 10_000;

/**
 * Each tenant's merchant keys at the card provider: stored sealed (AES-256-GCM, SECRETS_KEY),
 * opened only to call the provider, shown only masked. In sandbox mode a new tenant gets a sandbox
 * merchant from the sandbox's control listener. A replica keeps the sealed row it read for
 * KEY_CACHE_TTL_MS (as it keeps API keys), so that a provider call reads no row: keys replaced on
 * this replica apply at once, on the others within that time.
 */
@Injectable()
export class CardCredentialsService implements OnModuleInit {
  constructor(
    private readonly rows: MerchantCredentialsRepository,
    private readonly tenants: TenantsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly secrets: SecretsService,
  ) {}

  onModuleInit(): void {
    if (this.config.mode === 'sandbox' && this.config.upstreams.card.sandboxControlUrl)
      this.tenants.onTenantCreated((tenant) => this.provisionQuietly(tenant));
  }

  /**
   * Sets (or replaces) a tenant's keys; `tenant` is its id or slug. With `keepExisting`, keys the
   * tenant has already stay (one statement, so that two processes provisioning at once never
   * overwrite each other's keys).
   */
  async set(
    tenant: string,
    keys: MerchantKeys,
    source: 'operator' | 'sandbox' = 'operator',
    merchantId: string | null = null,
    keepExisting = false,
  ): Promise<MaskedCredentials> {
    const { id: tenantId } = await this.tenants.findTenant(tenant);
    const seal = (field: KeyField) => {
      const value = keys[field];
      return value === undefined ? null : this.secrets.seal(value, `${tenantId}:${field}`);
    };
    const hint = (field: KeyField) => {
      const value = keys[field];
      return value === undefined ? null : maskKey(value);
    };
    const row = {
      tenantId,
      secretKeySealed: seal('secretKey') as string,
      secretKeyHint: hint('secretKey') as string,
      publicKeySealed: seal('publicKey'),
      publicKeyHint: hint('publicKey'),
      posKeySealed: seal('posKey'),
      posKeyHint: hint('posKey'),
      merchantId,
      source,
    };
    await this.rows.store(row, keepExisting);
    this.cached.delete(tenantId);
    return (await this.view(tenantId)) as MaskedCredentials;
  }

  async view(tenantId: string): Promise<MaskedCredentials | undefined> {
    const row = await this.rows.find(tenantId);
    if (!row) return undefined;
    return {
      tenantId,
      secretKey: row.secretKeyHint,
      publicKey: row.publicKeyHint,
      posKey: row.posKeyHint,
      source: row.source,
      merchantId: row.merchantId,
      updatedAt: row.updatedAt,
    };
  }

  /** Sealed rows read lately, by tenant. */
  private readonly cached = new ExpiringMap<string, CardCredentials>(MAX_CACHED);

  /** The tenant's sealed row: the one read within KEY_CACHE_TTL_MS, or read now. */
  private async sealedRow(tenantId: string): Promise<CardCredentials | null> {
    const hit = this.cached.get(tenantId);
    if (hit) return hit;
    const row = await this.rows.find(tenantId);
    // Only rows: keys set on another replica are seen at once by a tenant that had none.
    if (row) this.cached.set(tenantId, row, this.config.http.keyCacheTtlMs);
    return row;
  }

  /** The keys to call the provider with for a tenant; a problem when it has none. */
  async keysOf(tenantId: string): Promise<MerchantKeys> {
    const row = await this.sealedRow(tenantId);
    if (!row)
      throw new ProblemException({
        status: 409,
        type: CARD_CREDENTIALS_MISSING,
        title: 'Card merchant keys missing',
        detail:
          'This tenant has no merchant keys at the card provider yet; an operator sets them (PUT /v1/tenants/{tenantId}/card-credentials)',
      });
    const open = (sealed: string | null, field: KeyField) =>
      sealed === null ? undefined : this.secrets.open(sealed, `${tenantId}:${field}`);
    try {
      return {
        secretKey: open(row.secretKeySealed, 'secretKey') as string,
        publicKey: open(row.publicKeySealed, 'publicKey'),
        posKey: open(row.posKeySealed, 'posKey'),
      };
    } catch (error) {
      // Sealed under another SECRETS_KEY (or altered): no call can be made until an operator acts.
      this.logger.error(
        { err: error, tenantId },
        "the tenant's merchant keys do not open with this SECRETS_KEY",
      );
      throw new ProblemException({
        status: 503,
        type: CARD_CREDENTIALS_UNREADABLE,
        title: 'Card merchant keys unreadable',
        detail:
          "This tenant's merchant keys were sealed with another SECRETS_KEY than the one configured; an operator configures that key or sets the keys again (PUT /v1/tenants/{tenantId}/card-credentials)",
      });
    }
  }

  /**
   * Sandbox mode: gives a tenant a sandbox merchant unless it has keys already (`fresh`: a new one
   * in any case, e.g. for a sandbox that kept no state).
   */
  async ensureSandboxMerchant(tenant: Tenant, fresh = false): Promise<void> {
    if (!fresh && (await this.rows.exists(tenant.id))) return;
    const controlUrl = this.config.upstreams.card.sandboxControlUrl;
    if (this.config.mode !== 'sandbox' || !controlUrl)
      throw new Error('sandbox merchants exist in sandbox mode only');
    const response = await fetch(`${controlUrl}/sandbox/card/merchants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: tenant.name }),
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status !== 201)
      throw new Error(`the sandbox answered ${response.status} to a new merchant`);
    const merchant = (await response.json()) as {
      merchantId: string;
      secretKey: string;
      publicKey: string;
    };
    // Its POS key too (the sandbox's POS side), so that the tenant can use terminals there.
    const pos = await fetch(`${controlUrl}/sandbox/pos/merchants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ merchantId: merchant.merchantId }),
      signal: AbortSignal.timeout(10_000),
    });
    const posKey =
      pos.status === 201 ? ((await pos.json()) as { posKey: string }).posKey : undefined;
    await this.set(
      tenant.id,
      { secretKey: merchant.secretKey, publicKey: merchant.publicKey, posKey },
      'sandbox',
      merchant.merchantId,
      !fresh,
    );
    this.logger.info({ tenantId: tenant.id, merchantId: merchant.merchantId }, 'sandbox merchant');
  }

  private async provisionQuietly(tenant: Tenant): Promise<void> {
    try {
      await this.ensureSandboxMerchant(tenant);
    } catch (error) {
      // The tenant exists either way; an operator can set keys later.
      this.logger.warn(
        { tenantId: tenant.id, err: error },
        'no sandbox card merchant for the new tenant',
      );
    }
  }
}
