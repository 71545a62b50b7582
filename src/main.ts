import 'reflect-metadata';
import { ConfigError, loadConfig, type AppConfig } from './platform/config/app-config.js';
import { CertificateStartupError } from './upstreams/open-banking/qwac/certificate-status.service.js';
import { resolveDatabase } from './platform/database/database-url.js';
import { ensureDevCertificates } from './sandbox/dev-certificates.js';
import { startSandbox, type RunningSandbox } from './sandbox/sandbox.js';
import { createGateway, listenGateway } from './gateway.js';
import { createLogger } from './platform/logging/logger.js';
import { DOCS_PATH } from './platform/openapi/openapi-document.js';
import { DEMO_TENANT_SLUG, issueSandboxKeys } from './access/tenants/demo-tenant.js';
import { CardCredentialsService } from './card/credentials/card-credentials.service.js';
import { TenantsService } from './access/tenants/tenants.service.js';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`portico: ${error.message}\nSee .env.example for every variable.\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.log.level);

  const database = await resolveDatabase(config);
  config = database.config;
  const embedded = database.embedded;
  if (embedded)
    logger.info(
      { dataDir: config.database.embeddedDir, joined: !embedded.owned },
      'embedded PostgreSQL (PGlite) ready',
    );

  // Sandbox mode runs the provider's sandbox in this process, unless UPSTREAM_OB_BASE_URL points at one elsewhere.
  let sandbox: RunningSandbox | undefined;
  if (config.mode === 'sandbox' && ensureDevCertificates(config.sandbox.certsDir))
    logger.info({ dir: config.sandbox.certsDir }, 'made the development certificates');
  if (config.mode === 'sandbox' && !config.upstreams.openBanking.baseUrl) {
    // The bank keeps its state beside the gateway's data (schema `sandbox`), so that both survive a
    // restart together; an embedded engine in memory keeps nothing, and neither does the bank.
    const volatile = embedded !== undefined && config.database.embeddedDir === 'memory://';
    sandbox = await startSandbox({
      ...config.sandbox,
      ...(config.database.url && !volatile ? { database: { url: config.database.url } } : {}),
    });
    config = {
      ...config,
      upstreams: {
        ...config.upstreams,
        openBanking: { ...config.upstreams.openBanking, baseUrl: sandbox.openBankingUrl },
        card: {
          ...config.upstreams.card,
          baseUrl: config.upstreams.card.baseUrl ?? sandbox.cardUrl,
          sandboxControlUrl: sandbox.scaUrl,
        },
        pos: { ...config.upstreams.pos, baseUrl: config.upstreams.pos.baseUrl ?? sandbox.posUrl },
      },
    };
    logger.info(
      { openBankingUrl: sandbox.openBankingUrl, cardUrl: sandbox.cardUrl, scaUrl: sandbox.scaUrl },
      'sandbox started',
    );
  }

  const app = await createGateway(config, logger);
  const { metricsUrl } = await listenGateway(app, config);
  const startedInMs = Math.round(performance.now());

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.error({ timeoutMs: config.http.shutdownTimeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, config.http.shutdownTimeoutMs);
    force.unref();
    await app.close();
    await sandbox?.close();
    await embedded?.stop();
    logger.info('shutdown complete');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  const base = config.http.publicBaseUrl;
  const lines = [
    `Portico is ready (${config.mode} mode) in ${startedInMs} ms`,
    `  Swagger UI:   ${base}/${DOCS_PATH}`,
    `  OpenAPI spec: ${base}/${DOCS_PATH}/openapi.json`,
    `  Metrics:      ${metricsUrl ?? 'off (METRICS_PORT=off)'}`,
  ];
  if (config.mode === 'sandbox') {
    const tenants = app.get(TenantsService);
    const keys = await issueSandboxKeys(tenants);
    // The demo tenant is a merchant of the sandbox's card API too (kept across restarts).
    const card = await app
      .get(CardCredentialsService)
      .ensureSandboxMerchant(await tenants.findTenant(DEMO_TENANT_SLUG))
      .then(() => 'ready')
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'the demo tenant has no sandbox card merchant');
        return 'no sandbox merchant (see the log)';
      });
    lines.push(
      `  Demo API key (tenant "demo", role app): ${keys.demo}`,
      `  Try: curl -H "Authorization: Bearer ${keys.demo}" ${base}/v1/me`,
      `  Operator key (tenant "operations", role operator): ${keys.operator}`,
    );
    if (sandbox)
      lines.push(
        `  Sandbox:      open banking ${sandbox.openBankingUrl} (mTLS), SCA pages ${sandbox.scaUrl}`,
        `  Sandbox card: ${sandbox.cardUrl} (TLS, Basic auth; test merchant: POST ${sandbox.scaUrl}/sandbox/card/merchants)`,
        `  Sandbox POS:  ${sandbox.posUrl}/pos/v1 (TLS, p_ keys; terminals: POST ${sandbox.scaUrl}/sandbox/pos/merchants/{id}/terminals)`,
      );
    lines.push(`  Card API:     ${base}/v1/card/payments (demo tenant's card merchant: ${card})`);
  }
  logger.info({ startedInMs, mode: config.mode, url: base, metricsUrl }, 'ready');
  // The banner is for the person at the terminal, not a log line: it is the one place a key is shown.
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

main().catch((error: unknown) => {
  if (error instanceof CertificateStartupError) {
    process.stderr.write(`portico: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `portico: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
