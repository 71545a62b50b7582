import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { DataSource } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import { loadConfig, type AppConfig } from '#src/platform/config/app-config.js';
import { createGateway, listenGateway } from '#src/gateway.js';
import { createLogger } from '#src/platform/logging/logger.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import type { ApiKeyRole } from '#src/access/tenants/api-key.entity.js';
import { TenantsService } from '#src/access/tenants/tenants.service.js';
import { freePort } from './processes.js';
import { checkTrailInvariants, trailMark, type Unchecked } from './trail-invariants.js';
import { testDatabaseUrl } from './test-database.js';

export { testDatabaseUrl };

/** The environment a test gateway runs with: the test database, quiet unless a test asks. */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  // Test gateways share one database but each has its own sandbox: only the tests about the resolver run it.
  return {
    DATABASE_URL: testDatabaseUrl(),
    LOG_LEVEL: 'debug',
    DATABASE_POOL_SIZE: '4',
    RECONCILE_ON_START: 'false',
    RESOLVER_INTERVAL_MS: '0',
    // Pending rows are read from the provider only by the tests about it, on databases of their own.
    PROVIDER_SYNC_INTERVAL_MS: '0',
    // Reconciliation runs on its schedule only in the tests about it.
    RECONCILIATION_INTERVAL_MS: '0',
    // The audit chain is sealed only by the tests about it (test/audit), on a database of their own.
    AUDIT_SEAL_INTERVAL_MS: '0',
    AUDIT_CHECKPOINT_INTERVAL_MS: '0',
    AUDIT_RETENTION_INTERVAL_MS: '0',
    AUDIT_VERIFY_INTERVAL_MS: '0',
    AUDIT_ARCHIVE_INTERVAL_MS: '0',
    // Webhooks are delivered only by the tests about them (test/webhooks), on databases of their own.
    WEBHOOK_WORKER_INTERVAL_MS: '0',
    WEBHOOK_RENEWAL_INTERVAL_MS: '0',
    // Secrets are sealed again with the current key only by the tests about it (test/platform/secrets-rotation).
    SECRETS_RESEAL_INTERVAL_MS: '0',
    // The hot tables are analysed only by the tests about it (test/platform/database-maintenance).
    DB_ANALYZE_INTERVAL_MS: '0',
    // A listening test gateway takes a free metrics port, never the fixed default.
    METRICS_PORT: '0',
    ...overrides,
  };
}

export interface TestGateway {
  app: NestFastifyApplication;
  /** http://127.0.0.1:<port> when started with listen; the configured public address otherwise. */
  baseUrl: string;
  /** http://127.0.0.1:<port>/metrics when started with listen (and METRICS_PORT is not off). */
  metricsUrl?: string;
  /** The sandbox this gateway talks to (its own, on free ports). */
  sandbox: RunningSandbox;
  config: AppConfig;
  /** Every log line the gateway and its sandbox (`component: sandbox`) wrote, as written. */
  logs: string[];
  tenants: TenantsService;
  dataSource: DataSource;
  /** A fresh tenant with a key of the given role. */
  newTenantWithKey(
    role: ApiKeyRole,
  ): Promise<{ tenantId: string; slug: string; key: string; keyId: string }>;
  /**
   * Stops the gateway, then checks the audit trail's invariants (checkTrailInvariants): the chain
   * verifies and no row of its tenants is left `sent`. A test that breaks them on purpose (tampers
   * with the trail, kills the database under the gateway) says why: close({ unchecked: '…' }).
   */
  close(options?: Unchecked): Promise<void>;
}

export function uniqueSlug(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

/** The real gateway, in process, on the test database; requests go through Fastify's inject. */
export async function startTestGateway(
  env: Record<string, string> = {},
  imports: unknown[] = [],
  options: { listen?: boolean } = {},
): Promise<TestGateway> {
  // A listening gateway (for browsers) needs its address before it is built: the SCA callback points at it.
  const port = options.listen ? await freePort() : 0;
  const listenEnv: Record<string, string> = options.listen
    ? { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }
    : {};
  const base = loadConfig(testEnv({ ...listenEnv, ...env }));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger(base.log.level, sink);
  const sandbox = await startSandbox({
    ...base.sandbox,
    log: logger.child({ component: 'sandbox' }),
    openBankingPort: 0,
    scaPort: 0,
    cardPort: 0,
    posPort: 0,
  });
  const config: AppConfig = {
    ...base,
    upstreams: {
      ...base.upstreams,
      openBanking: {
        ...base.upstreams.openBanking,
        baseUrl: base.upstreams.openBanking.baseUrl ?? sandbox.openBankingUrl,
      },
      card: {
        ...base.upstreams.card,
        baseUrl: base.upstreams.card.baseUrl ?? sandbox.cardUrl,
        sandboxControlUrl: sandbox.scaUrl,
      },
      pos: { ...base.upstreams.pos, baseUrl: base.upstreams.pos.baseUrl ?? sandbox.posUrl },
    },
  };
  // A gateway that fails to build or to listen leaves nothing open behind it (jest would have to kill
  // its worker to end the run).
  let app: NestFastifyApplication | undefined;
  let metricsUrl: string | undefined;
  try {
    app = await createGateway(config, logger, {
      imports: imports as never[],
    });
    if (options.listen) ({ metricsUrl } = await listenGateway(app, config));
    else await app.getHttpAdapter().getInstance().ready();
  } catch (error) {
    await app?.close().catch(() => undefined);
    await sandbox.close();
    throw error;
  }
  const tenants = app.get(TenantsService);
  const dataSource = app.get<DataSource>(getDataSourceToken());
  // Its own tenants, however made (the helper below, the admin API, the CLI commands in process).
  const ownTenants = new Set<string>();
  const createTenant = tenants.createTenant.bind(tenants);
  tenants.createTenant = async (...args) => {
    const tenant = await createTenant(...args);
    ownTenants.add(tenant.id);
    return tenant;
  };
  const since = await trailMark(dataSource);
  return {
    app,
    baseUrl: config.http.publicBaseUrl,
    metricsUrl,
    sandbox,
    config,
    logs,
    tenants,
    dataSource,
    async newTenantWithKey(role) {
      const slug = uniqueSlug();
      const tenant = await tenants.createTenant(slug, `Tenant ${slug}`);
      const { apiKey, key } = await tenants.issueKey(tenant.id, role);
      return { tenantId: tenant.id, slug, key, keyId: apiKey.id };
    },
    async close(options) {
      await app.close();
      await sandbox.close();
      if (!options?.unchecked) await checkTrailInvariants(config, since, ownTenants);
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** How many API calls the gateway's sandbox bank has answered, all operations together. */
export const bankCallCount = (gateway: TestGateway) =>
  Object.values(gateway.sandbox.bank.control.calls()).reduce((sum, n) => sum + n, 0);
