import 'reflect-metadata';
import { ConfigError, loadConfig, type AppConfig } from './platform/config/app-config.js';
import { portInUseMessage } from './platform/config/port-in-use.js';
import { recordRunning, startBlocked } from './platform/config/running-instance.js';
import { resolveDatabase } from './platform/database/database-url.js';
import { whileDatabaseUnavailable } from './platform/database/database-unavailable.js';
import { ensureDevCertificates } from './sandbox/dev-certificates.js';
import type { RunningSandbox } from './sandbox/sandbox.js';
import { createLogger } from './platform/logging/logger.js';
import {
  DEMO_TENANT_SLUG,
  issueSandboxKeys,
  sandboxKeysFile,
} from './access/tenants/demo-tenant.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import {
  announceReady,
  startWorkers,
  workerRole,
  type WorkerRole,
} from './platform/cluster/gateway-workers.js';

/** The configuration as loaded, for the failure message of a start that could not open a port. */
let loaded: AppConfig | undefined;

/**
 * The gateway's modules (Nest, TypeORM, every feature module: most of a start's CPU time before the
 * first request), loaded once, on first use. The primary asks for them right after it has started the
 * embedded engine, so that they load while the engine (a process of its own) opens its data.
 */
let gatewayModules:
  | Promise<{
      gateway: typeof import('./gateway.js');
      tenants: typeof import('./access/tenants/tenants.service.js');
      cardCredentials: typeof import('./access/merchant-credentials/card-credentials.service.js');
      openApi: typeof import('./platform/openapi/openapi-document.js');
    }>
  | undefined;
function loadGatewayModules(): NonNullable<typeof gatewayModules> {
  gatewayModules ??= Promise.all([
    import('./gateway.js'),
    import('./access/tenants/tenants.service.js'),
    import('./access/merchant-credentials/card-credentials.service.js'),
    import('./platform/openapi/openapi-document.js'),
  ]).then(([gateway, tenants, cardCredentials, openApi]) => ({
    gateway,
    tenants,
    cardCredentials,
    openApi,
  }));
  return gatewayModules;
}

async function main(): Promise<void> {
  const worker = workerRole();
  let config: AppConfig;
  if (worker) config = worker.config;
  else
    try {
      config = loadConfig();
    } catch (error) {
      if (error instanceof ConfigError) {
        process.stderr.write(`portico: ${error.message}\nSee .env.example for every variable.\n`);
        process.exit(1);
      }
      throw error;
    }
  loaded = config;
  const logger = worker
    ? createLogger(config.log.level).child({ worker: worker.index, pid: process.pid })
    : createLogger(config.log.level);
  if (worker) return serve(config, logger, worker);
  const blocked = await startBlocked(config);
  if (blocked) {
    process.stderr.write(`portico: ${blocked}\n`);
    process.exit(1);
  }

  // The person at the terminal sees why the first seconds pass (a fresh engine creates its data).
  if (!config.database.url)
    process.stderr.write(
      `portico: starting the embedded PostgreSQL (PGlite) on ${config.database.embeddedDir}…\n`,
    );
  const resolving = resolveDatabase(config, {
    died: (details) =>
      logger.error(
        { ...details, dataDir: config.database.embeddedDir },
        'embedded PostgreSQL (PGlite) stopped unexpectedly; restarting it on the same data directory',
      ),
    restarted: (details) =>
      logger.warn(
        {
          ...details,
          dataDir: config.database.embeddedDir,
          ...(config.database.embeddedDir === 'memory://' ? { dataLost: true } : {}),
        },
        'embedded PostgreSQL (PGlite) restarted',
      ),
    restartFailed: ({ attempt, error }) =>
      logger.error({ attempt, err: error }, 'embedded PostgreSQL (PGlite) could not be restarted'),
  });
  // While the engine starts: the gateway's modules, the sandbox's, the development certificates. A
  // failure to load surfaces where the module is used (here only a rejection nobody waits for yet).
  const sandboxInProcess = config.mode === 'sandbox' && !config.upstreams.openBanking.baseUrl;
  const sandboxModule = sandboxInProcess ? import('./sandbox/sandbox.js') : undefined;
  sandboxModule?.catch(() => undefined);
  if (config.http.workers <= 1) loadGatewayModules().catch(() => undefined);
  if (config.mode === 'sandbox' && ensureDevCertificates(config.sandbox.certsDir))
    logger.info({ dir: config.sandbox.certsDir }, 'made the development certificates');
  const database = await resolving;
  config = database.config;
  const embedded = database.embedded;
  if (embedded)
    logger.info(
      { dataDir: config.database.embeddedDir, joined: !embedded.owned },
      'embedded PostgreSQL (PGlite) ready',
    );

  // Sandbox mode runs the provider's sandbox in this process, unless UPSTREAM_OB_BASE_URL points at one elsewhere.
  let sandbox: RunningSandbox | undefined;
  if (sandboxModule) {
    // The bank keeps its state beside the gateway's data (schema `sandbox`), so that both survive a
    // restart together; an embedded engine in memory keeps nothing, and neither does the bank.
    const volatile = embedded !== undefined && config.database.embeddedDir === 'memory://';
    // Loaded only then: a gateway against a sandbox elsewhere keeps none of the sandbox's modules.
    const { startSandbox } = await sandboxModule;
    sandbox = await whileDatabaseUnavailable(
      'the sandbox',
      () =>
        startSandbox({
          ...config.sandbox,
          log: logger.child({ component: 'sandbox' }),
          ...(config.database.url && !volatile ? { database: { url: config.database.url } } : {}),
        }),
      logger,
    );
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
  const closeSupport = async () => {
    await sandbox?.close();
    await embedded?.stop();
  };
  // Only a Portico on the embedded engine's data says so beside it (replicas on PostgreSQL are many).
  const onOwnData = embedded !== undefined;
  if (config.http.workers > 1)
    return superviseWorkers(config, logger, sandbox, closeSupport, onOwnData);

  const { createGateway, listenGateway } = (await loadGatewayModules()).gateway;
  const app = await createGateway(config, logger);
  const { metricsUrl } = await listenGateway(app, config);
  const startedInMs = Math.round(performance.now());
  onShutdownSignal(config, logger, async () => {
    await closeGateway(app);
    await closeSupport();
  });
  const keyLines =
    config.mode === 'sandbox'
      ? await whileDatabaseUnavailable(
          "the sandbox's keys",
          () => sandboxKeyLines(app, config, logger),
          logger,
        )
      : [];
  const docsPath = (await loadGatewayModules()).openApi.DOCS_PATH;
  printBanner(config, logger, { startedInMs, metricsUrl, sandbox, keyLines, docsPath });
  if (onOwnData) recordRunning(config);
}

/** A gateway worker of several (GATEWAY_WORKERS): it serves the port the primary shares with it. */
async function serve(config: AppConfig, logger: Logger, worker: WorkerRole): Promise<void> {
  const { createGateway, listenGateway } = (await loadGatewayModules()).gateway;
  const app = await createGateway(config, logger);
  await listenGateway(app, config);
  logger.info('gateway worker listening');
  onShutdownSignal(config, logger, () => closeGateway(app));
  const lines =
    worker.banner && config.mode === 'sandbox'
      ? await whileDatabaseUnavailable(
          "the sandbox's keys",
          () => sandboxKeyLines(app, config, logger),
          logger,
        )
      : undefined;
  announceReady(lines);
}

/** The primary of several gateway workers: it holds the engine and the sandbox, they serve the port. */
async function superviseWorkers(
  config: AppConfig,
  logger: Logger,
  sandbox: RunningSandbox | undefined,
  closeSupport: () => Promise<void>,
  onOwnData: boolean,
): Promise<void> {
  // The workers run this module itself (not the npm start wrapper that imported it).
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url), args: [] });
  const primary = await startWorkers(config, logger, (reason) => {
    logger.error({ reason }, 'stopping: the gateway workers cannot run');
    void primary
      .stop()
      .then(closeSupport)
      .finally(() => process.exit(1));
  });
  onShutdownSignal(config, logger, async () => {
    await primary.stop();
    await closeSupport();
  });
  const keyLines = await primary.ready;
  const startedInMs = Math.round(performance.now());
  const { DOCS_PATH } = await import('./platform/openapi/openapi-document.js');
  printBanner(config, logger, {
    startedInMs,
    metricsUrl: primary.metricsUrl,
    sandbox,
    keyLines,
    docsPath: DOCS_PATH,
  });
  if (onOwnData) recordRunning(config);
}

/**
 * Closes a gateway: its listener first, so that no connection is taken once shutdown began (Nest's
 * close runs the modules' destroy hooks before it closes the HTTP server; Fastify's close then finds
 * the listener closed), then the application, which finishes the requests in flight.
 */
async function closeGateway(app: NestFastifyApplication): Promise<void> {
  app.getHttpServer().close();
  await app.close();
}

/** SIGTERM and SIGINT finish in-flight work (`stop`) and exit; a stop that hangs is cut short. */
function onShutdownSignal(config: AppConfig, logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(
      () => {
        logger.error({ timeoutMs: config.http.shutdownTimeoutMs }, 'shutdown timed out; exiting');
        process.exit(1);
      },
      config.http.shutdownTimeoutMs + (config.http.workers > 1 ? 5000 : 0),
    );
    force.unref();
    await stop();
    logger.info('shutdown complete');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** Issues the sandbox's demo and operator keys and readies the demo card merchant: the banner's lines. */
async function sandboxKeyLines(
  app: NestFastifyApplication,
  config: AppConfig,
  logger: Logger,
): Promise<string[]> {
  const base = config.http.publicBaseUrl;
  const modules = await loadGatewayModules();
  const tenants = app.get(modules.tenants.TenantsService);
  const keys = await issueSandboxKeys(tenants, sandboxKeysFile(config.database.embeddedDir));
  // The demo tenant is a merchant of the sandbox's card API too (kept across restarts).
  const card = await app
    .get(modules.cardCredentials.CardCredentialsService)
    .ensureSandboxMerchant(await tenants.findTenant(DEMO_TENANT_SLUG))
    .then(() => 'ready')
    .catch((error: unknown) => {
      logger.warn({ err: error }, 'the demo tenant has no sandbox card merchant');
      return 'no sandbox merchant (see the log)';
    });
  return [
    sandboxKeyExports(keys),
    `  Demo API key (tenant "demo", role app): ${keys.demo}`,
    `  Try: curl -H "Authorization: Bearer ${keys.demo}" ${base}/v1/me`,
    `  Operator key (tenant "operations", role operator): ${keys.operator}`,
    `  Auditor key (tenant "operations", role auditor): ${keys.auditor}`,
    `  Auditor's page: ${base}/audit (log in with the auditor key)`,
    keys.keptIn
      ? `  Keys kept in ${keys.keptIn} (yours only): the same keys at the next start`
      : `  Keys not kept${config.database.embeddedDir === 'memory://' ? ' (EMBEDDED_DB_DIR=memory://)' : ''}: new ones at every start; a lasting key: npm run cli -- key:issue demo --role app`,
    `  Card API:     ${base}/v1/card/payments (demo tenant's card merchant: ${card})`,
  ];
}

/** The keys as the examples name them: the banner's second `export` line. */
function sandboxKeyExports(keys: { demo: string; operator: string; auditor: string }): string {
  return `export KEY=${keys.demo} OPERATOR_KEY=${keys.operator} AUDITOR_KEY=${keys.auditor}`;
}

function printBanner(
  config: AppConfig,
  logger: Logger,
  shown: {
    startedInMs: number;
    metricsUrl?: string;
    sandbox?: RunningSandbox;
    keyLines: string[];
    docsPath: string;
  },
): void {
  const { startedInMs, metricsUrl, sandbox } = shown;
  // The first key line is the keys' `export` line: printed with the addresses', after the rest.
  const [keyExports, ...keyLines] = shown.keyLines[0]?.startsWith('export ')
    ? shown.keyLines
    : [undefined, ...shown.keyLines];
  const base = config.http.publicBaseUrl;
  const workers = config.http.workers > 1 ? `, ${config.http.workers} workers` : '';
  const lines = [
    `Portico is ready (${config.mode} mode${workers}) in ${startedInMs} ms`,
    `  Swagger UI:   ${base}/${shown.docsPath}`,
    `  OpenAPI spec: ${base}/${shown.docsPath}/openapi.json`,
    `  Metrics:      ${metricsUrl ?? 'off (METRICS_PORT=off)'}`,
    ...keyLines,
  ];
  if (sandbox)
    lines.push(
      `  Sandbox:      open banking ${sandbox.openBankingUrl} (mTLS), SCA pages ${sandbox.scaUrl}`,
      `  Sandbox card: ${sandbox.cardUrl} (TLS, Basic auth; test merchant: POST ${sandbox.scaUrl}/sandbox/card/merchants)`,
      `  Sandbox POS:  ${sandbox.posUrl}/pos/v1 (TLS, p_ keys; terminals: POST ${sandbox.scaUrl}/sandbox/pos/merchants/{id}/terminals)`,
    );
  // Every example in README.md and docs/ names these variables, never an address or a key.
  const addresses = sandbox
    ? `export PORTICO=${base} SANDBOX=${sandbox.scaUrl} SANDBOX_CARD=${sandbox.cardUrl} SANDBOX_POS=${sandbox.posUrl}`
    : `export PORTICO=${base}`;
  lines.push(
    `  For the examples (README.md, docs/), in the shell that runs them:`,
    addresses,
    ...(keyExports ? [keyExports] : []),
  );
  logger.info(
    { startedInMs, mode: config.mode, url: base, metricsUrl, workers: config.http.workers },
    'ready',
  );
  // The banner is for the person at the terminal, not a log line: it is the one place a key is shown.
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

main().catch((error: unknown) => {
  // By name: the class's module (certificate-status.service.ts) is one of the gateway's, loaded late.
  if (error instanceof Error && error.name === 'CertificateStartupError') {
    process.stderr.write(`portico: ${error.message}\n`);
    process.exit(1);
  }
  const portInUse = loaded && portInUseMessage(error, loaded);
  if (portInUse) {
    process.stderr.write(`portico: ${portInUse}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `portico: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
