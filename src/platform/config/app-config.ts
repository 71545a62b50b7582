import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';

/** The one typed configuration object. Only `loadConfig` reads the environment. */
export interface AppConfig {
  mode: 'sandbox' | 'production';
  http: {
    host: string;
    port: number;
    /** Address the gateway is reached at by browsers and apps (SCA callbacks, printed links). */
    publicBaseUrl: string;
    bodyLimitBytes: number;
    shutdownTimeoutMs: number;
    /**
     * Gateway processes serving the port on this machine (Node's cluster module): 1 runs the gateway
     * in the started process; more run a primary (the embedded engine, the sandbox, the metrics) and
     * that many workers.
     */
    workers: number;
    /** Requests per API key per minute, across all replicas. */
    rateLimitPerMinute: number;
    /**
     * How long a replica trusts an API key it authenticated before it looks at the key's row again:
     * the bound on how long a revoked key keeps working when the revocation notice is lost.
     */
    keyCacheTtlMs: number;
  };
  log: { level: LogLevel };
  /** OpenTelemetry traces: exported by OTLP/HTTP when an endpoint is set (trace ids are made either way). */
  tracing: TracingConfig;
  /** The Prometheus `/metrics` listener, apart from the API port; no port means none is started. */
  metrics: {
    host: string;
    /** 0 = a free port chosen at start. */
    port?: number;
    /**
     * In a gateway worker (GATEWAY_WORKERS above 1): the address where its primary serves /metrics,
     * summed over the workers; the worker itself listens on no metrics port.
     */
    servedByPrimary?: string;
  };
  database: {
    /** PostgreSQL server; undefined means the embedded engine. */
    url?: string;
    poolSize: number;
    /** Data directory of the embedded engine (`memory://` keeps nothing). */
    embeddedDir: string;
    /** How often the hot tables are analysed (and, on the embedded engine, vacuumed now and then); 0: never. */
    analyzeIntervalMs: number;
  };
  /** One group per upstream API: where it is, how Portico authenticates, how long it may take. */
  upstreams: {
    openBanking: {
      baseUrl?: string;
      /** The QWAC presented over mutual TLS, and the CAs of the provider's server certificate. */
      qwac: {
        certFile?: string;
        keyFile?: string;
        keyPassphrase?: string;
        /** A PKCS#12 file holding the QWAC and its key, instead of the two PEM files. */
        p12File?: string;
        /** CAs of the provider's server certificate. */
        caFile?: string;
        /** CAs the client certificate must chain to (the QTSP's); defaults to caFile. */
        clientCaFile?: string;
        /** How often, at most, the files are looked at for a renewal. */
        recheckMs: number;
      };
      http: UpstreamHttpConfig;
    };
    /** The card API: Basic auth with each tenant's merchant keys (sealed with SECRETS_KEY), over TLS. */
    card: {
      baseUrl?: string;
      /** The payment form's host ({payform_url}); unset: the card API's (the sandbox serves both). */
      payformUrl?: string;
      /** The token endpoint as payers' browsers reach it (public-key tokenisation); unset: `<baseUrl>/tokens`. */
      tokenizationUrl?: string;
      /** CAs of the card API's server certificate; unset: the system's (the sandbox's CA in sandbox mode). */
      caFile?: string;
      http: UpstreamHttpConfig;
      /** The sandbox's control listener (sandbox mode): where a new tenant gets a test merchant. */
      sandboxControlUrl?: string;
    };
    /** The POS terminal interface: Basic auth with each tenant's POS key, JSON, calls held up to 180 s. */
    pos: {
      baseUrl?: string;
      /** CAs of its server certificate: the card API's (UPSTREAM_CARD_CA_FILE; same provider). */
      caFile?: string;
      /** Its own pool; its reads get the read deadline (UPSTREAM_DEADLINE_MS) like every upstream. */
      http: UpstreamHttpConfig;
      /** The deadline of the payment call alone: it lasts as long as the payer at the terminal. */
      paymentDeadlineMs: number;
      /** The longest a facade request waits for a terminal before answering 202. */
      syncWaitMs: number;
    };
  };
  /** Encryption at rest of the secrets Portico keeps (AES-256-GCM): merchant keys, webhook secrets. */
  secrets: {
    /** The key that seals: 32 bytes, base64 or hex; unset: a development key in SANDBOX_CERTS_DIR (sandbox mode) or none. */
    key?: string;
    /** Further keys that open what they sealed (a rotation's previous keys). */
    previousKeys: string[];
    /** How often values sealed with another key than `key` are sealed again with it (0: never on this replica). */
    resealIntervalMs: number;
  };
  /** Open-banking services the gateway offers; the QWAC must carry the role of each. */
  openBankingServices: OpenBankingService[];
  /** Resolve half-written consents and payments against the bank at start. */
  reconcileOnStart: boolean;
  /** The resolver of writes in doubt: how often it runs, and when a write no lookup can settle is given up. */
  resolver: { intervalMs: number; giveUpAfterMs: number; consentScaWindowMs: number };
  /** The background sync of statuses the provider never pushes (notifications, IRIS sessions, POS). */
  providerSync: {
    /** How often due rows are looked for, and the shortest pause between two reads of one (0: off). */
    intervalMs: number;
  };
  /** Reconciliation of Portico's records with the provider's (docs/reconciliation.md). */
  reconciliation: {
    /** How often each replica looks for windows due (the previous day, the recent window); 0: never. */
    intervalMs: number;
    /** Days of the rolling recent window, today included (0: none; the previous day only). */
    recentDays: number;
    /** Provider calls a second per tenant, on each replica. */
    requestsPerSecond: number;
    /** How long a run holds its window without renewing (after each page). */
    leaseMs: number;
    /** Final rows read by id in each run of a capability without a list (open banking, POS). */
    finalSample: number;
  };
  /** The tamper-evident chain over the audit trail: its sealer and its signed checkpoints. */
  audit: {
    sealIntervalMs: number;
    sealGraceMs: number;
    checkpointIntervalMs: number;
    /** Trail rows older than this many days are removed by the retention job (0: kept for ever). */
    retentionDays: number;
    retentionIntervalMs: number;
    /** How often one replica verifies the chain from the last verified checkpoint (0: never). */
    verifyIntervalMs: number;
    /** How often one replica creates the trail's monthly partitions ahead (0: never; at start too). */
    partitionIntervalMs: number;
    /** Where the archives of closed months are written (one gzip-compressed JSON Lines file a month). */
    archiveDir: string;
    /** How often one replica archives the closed months not archived yet (0: never). */
    archiveIntervalMs: number;
    /** Ed25519 private key (PKCS#8 PEM) that signs checkpoints; unset: a development key (sandbox) or none. */
    signingKeyPem?: string;
    /** PEM bundle of the public keys of retired signing keys, whose checkpoints still verify. */
    trustedKeysFile?: string;
  };
  /** Signed webhooks to apps: the delivery worker, its retry schedule, and the renewal-due job. */
  webhooks: {
    /** How often the delivery worker looks for due attempts (0: no worker on this replica). */
    workerIntervalMs: number;
    /** Attempts a worker runs at once. */
    concurrency: number;
    /** Attempts to one endpoint in flight at once, over all replicas (a failing endpoint: one). */
    endpointConcurrency: number;
    /** The share of a replica's attempts at once that one tenant may hold (at least one attempt). */
    tenantSharePercent: number;
    /** An endpoint whose attempts have all failed for this long is paused (webhook_endpoint.paused). */
    pauseAfterMs: number;
    /** The pause before retry n (the last one repeats), each varied by ± jitterPercent. */
    retryScheduleMs: number[];
    jitterPercent: number;
    /** Attempts before a delivery is dead-lettered. */
    maxAttempts: number;
    /** How long one attempt may take (connect, send, answer). */
    timeoutMs: number;
    /** How long a claimed attempt is a worker's; a crashed worker's attempt is retried after it. */
    leaseMs: number;
    /** How long the previous secret still signs after a rotation. */
    secretGraceMs: number;
    /** consent.renewal_due is sent this many days before scaRenewalDueAt or validUntil. */
    renewalDueDays: number;
    /** How often the renewal-due job looks for consents (0: never on this replica). */
    renewalIntervalMs: number;
  };
  sandbox: {
    /** Where the development certificates live (made by npm run certs). */
    certsDir: string;
    host: string;
    openBankingPort: number;
    scaPort: number;
    /** Port of the sandbox's card API (server TLS, Basic auth). */
    cardPort: number;
    /** Port of the sandbox's POS terminal interface (server TLS, `p_` keys). */
    posPort: number;
    /** Address browsers reach the SCA pages at (default http://localhost:SANDBOX_SCA_PORT). */
    scaPublicUrl?: string;
  };
}

/** Transport and seam settings of one upstream. */
export interface UpstreamHttpConfig {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  poolConnections: number;
  keepAliveTimeoutMs: number;
  /** The whole time one facade request may spend with the upstream, retries included. */
  deadlineMs: number;
  /** Pauses before each retry of a safe read. */
  retryDelaysMs: number[];
  breaker: { failureThreshold: number; openMs: number };
}

/** Where and how spans are exported; no endpoint: none are (no OpenTelemetry module is loaded). */
export interface TracingConfig {
  /** The collector's OTLP/HTTP base address; spans go to `<endpoint>/v1/traces`. */
  endpoint?: string;
  /** Headers sent with every export (a tracing backend's API key). */
  headers: Record<string, string>;
  serviceName: string;
  sampler: TraceSampler;
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  samplerRatio: number;
  /** The longest a finished span waits before it is exported. */
  exportDelayMs: number;
}

export const TRACE_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export const OPEN_BANKING_SERVICES = ['ais', 'cof', 'pis'] as const;
export type OpenBankingService = (typeof OPEN_BANKING_SERVICES)[number];

const OPEN_BANKING_SERVICES_DOC =
  'ais (account information, role PSP_AI), cof (confirmation of funds, PSP_IC), pis (payment initiation, PSP_PI)';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export interface VariableSpec {
  doc: string;
  default?: string;
  /** What an unset variable without a plain default means (a value derived from others, a fallback). */
  unset?: string;
  /** May be given as NAME_FILE, a path whose contents are the value. */
  secret?: boolean;
  /** Required when PORTICO_MODE=production. */
  production?: boolean;
}

/** Every variable Portico reads, documented once; `.env.example` mirrors this list (a test checks it). */
export const VARIABLES = {
  PORTICO_MODE: {
    doc: 'sandbox (upstream is the bundled sandbox, started with the gateway) or production',
    default: 'sandbox',
  },
  HOST: { doc: 'Interface the gateway listens on', default: '127.0.0.1' },
  PORT: { doc: 'Port the gateway listens on', default: '3000' },
  PUBLIC_BASE_URL: {
    unset: 'http://HOST:PORT',
    doc: 'Address browsers and apps reach the gateway at (SCA callbacks, printed links, webhook and IRIS callback addresses)',
  },
  BODY_LIMIT_BYTES: { doc: 'Largest accepted request body, in bytes', default: '262144' },
  GATEWAY_WORKERS: {
    doc: 'Gateway processes serving PORT on this machine, sharing its connections: a number, or auto (one per CPU); above 1 the started process is a primary that runs the embedded engine, the sandbox and /metrics (summed over the workers) and restarts a worker that dies',
    default: '1',
  },
  SHUTDOWN_TIMEOUT_MS: {
    doc: 'How long SIGTERM waits for in-flight requests before forcing exit',
    default: '10000',
  },
  RATE_LIMIT_PER_MINUTE: {
    doc: 'Requests each API key may make per minute, shared by all replicas',
    default: '600',
  },
  KEY_CACHE_TTL_MS: {
    doc: 'How long a replica trusts an API key it checked before reading its row again: the bound on how long a revoked key works when the revocation notice (LISTEN/NOTIFY) is lost (0: no cache)',
    default: '5000',
  },
  LOG_LEVEL: { doc: `One of ${LOG_LEVELS.join(', ')}`, default: 'info' },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    doc: 'OpenTelemetry collector base address (OTLP/HTTP, JSON; spans go to <address>/v1/traces); unset = no export and no OpenTelemetry SDK loaded (trace ids are still made, sent to the provider in traceparent and logged)',
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    doc: "Headers sent with every export, as comma-separated key=value pairs (values percent-encoded), e.g. a tracing backend's API key",
    secret: true,
  },
  OTEL_SERVICE_NAME: { doc: 'service.name of the exported spans', default: 'portico' },
  OTEL_TRACES_SAMPLER: {
    doc: `Which traces are recorded: ${TRACE_SAMPLERS.join(', ')} (parentbased: follow the caller's sampled flag when it sent a traceparent)`,
    default: 'parentbased_always_on',
  },
  OTEL_TRACES_SAMPLER_ARG: {
    doc: 'The ratio of the traceidratio samplers, from 0 to 1',
    default: '1',
  },
  OTEL_BSP_SCHEDULE_DELAY: {
    doc: 'The longest a finished span waits before it is exported, in milliseconds',
    default: '5000',
  },
  METRICS_HOST: {
    doc: 'Interface the Prometheus /metrics listener binds (apart from the API port)',
    default: '127.0.0.1',
  },
  METRICS_PORT: {
    doc: 'Port of the /metrics listener; 0 = any free port, off = no listener',
    default: '9464',
  },
  DATABASE_URL: {
    unset: 'the embedded engine (PGlite), data in EMBEDDED_DB_DIR',
    doc: 'PostgreSQL connection URL (postgres:// or postgresql://)',
    secret: true,
  },
  DATABASE_POOL_SIZE: {
    doc: 'Connections in the pool of each gateway process (the embedded engine serialises them); the hot path keeps 5 more',
    default: '10',
  },
  EMBEDDED_DB_DIR: {
    doc: 'Data directory of the embedded engine, or memory:// to keep nothing',
    default: './data/pglite',
  },
  DB_ANALYZE_INTERVAL_MS: {
    doc: 'How often the hot tables (access log, audit chain, provider resources, consents, payments, status changes, webhook deliveries, idempotency records, usage counters) are analysed, by one replica at a time; on the embedded engine, which has no autovacuum, every sixth run vacuums them too (0: never)',
    default: '600000',
  },
  UPSTREAM_OB_BASE_URL: {
    doc: "The provider's open-banking base address ({psd2_base_url}), https; in sandbox mode, a sandbox running elsewhere (none is started in the process)",
    production: true,
  },
  UPSTREAM_CLIENT_CERT_FILE: {
    doc: 'PEM file of the QWAC presented to the provider, with its chain (or UPSTREAM_CLIENT_P12_FILE); required in production unless UPSTREAM_CLIENT_P12_FILE is given',
    unset: "sandbox mode: SANDBOX_CERTS_DIR's tpp.pem",
  },
  UPSTREAM_CLIENT_KEY_FILE: {
    doc: 'PEM file of the QWAC private key (or UPSTREAM_CLIENT_P12_FILE); required in production unless UPSTREAM_CLIENT_P12_FILE is given',
    unset: "sandbox mode: SANDBOX_CERTS_DIR's tpp.key",
  },
  UPSTREAM_CLIENT_P12_FILE: {
    doc: 'PKCS#12 file holding the QWAC and its key, instead of the two PEM files',
  },
  UPSTREAM_CLIENT_KEY_PASSPHRASE: {
    doc: 'Passphrase of the QWAC private key or of the PKCS#12 file',
    secret: true,
  },
  UPSTREAM_CA_FILE: {
    doc: "PEM bundle of the CAs that sign the provider's server certificate",
    production: true,
  },
  UPSTREAM_CLIENT_CA_FILE: {
    unset: 'UPSTREAM_CA_FILE',
    doc: 'PEM bundle the QWAC must chain to (its QTSP), checked at start',
  },
  UPSTREAM_CLIENT_CERT_RECHECK_MS: {
    doc: 'How often, at most, the QWAC, its key and the CA files are looked at on disk: a renewed file is used from the next call after',
    default: '1000',
  },
  UPSTREAM_CONNECT_TIMEOUT_MS: {
    doc: 'TCP+TLS connect timeout towards the provider',
    default: '5000',
  },
  UPSTREAM_HEADERS_TIMEOUT_MS: {
    doc: "Time to wait for the provider's response headers",
    default: '15000',
  },
  UPSTREAM_BODY_TIMEOUT_MS: {
    doc: "Longest pause while reading the provider's response body",
    default: '15000',
  },
  UPSTREAM_POOL_CONNECTIONS: { doc: 'Kept-alive TLS connections per upstream', default: '16' },
  UPSTREAM_KEEPALIVE_MS: { doc: 'How long an idle upstream connection is kept', default: '30000' },
  UPSTREAM_DEADLINE_MS: {
    doc: 'The whole time one facade request may spend with the provider, retries included',
    default: '20000',
  },
  UPSTREAM_RETRY_DELAYS_MS: {
    doc: 'Comma-separated pauses before each retry of a read, or none (writes are never retried)',
    default: '100,400',
  },
  UPSTREAM_BREAKER_FAILURES: {
    doc: 'Consecutive failures (no answer or 5xx) that open the circuit of a bank',
    default: '5',
  },
  UPSTREAM_BREAKER_OPEN_MS: {
    doc: 'How long an open circuit refuses calls (503) before one trial call',
    default: '10000',
  },
  UPSTREAM_CARD_BASE_URL: {
    unset: "sandbox mode: the sandbox's card listener",
    doc: "The provider's card API base address ({base_url}), https",
  },
  UPSTREAM_CARD_PAYFORM_URL: {
    unset: 'UPSTREAM_CARD_BASE_URL',
    doc: "The provider's payment-form host ({payform_url}: the IRIS payment form), https",
  },
  UPSTREAM_CARD_TOKENIZATION_URL: {
    unset: 'UPSTREAM_CARD_BASE_URL/tokens',
    doc: "The provider's card-token endpoint as payers' browsers reach it (tokenisation with the tenant's public key), https",
  },
  UPSTREAM_CARD_CA_FILE: {
    unset: "the system's CAs; sandbox mode: the sandbox's development CA",
    doc: "PEM bundle of the CAs that sign the card API's and the POS interface's server certificates",
  },
  UPSTREAM_POS_BASE_URL: {
    unset: "sandbox mode: the sandbox's POS listener",
    doc: "The provider's POS terminal interface base address ({base_url}; paths carry /pos/v1), https",
  },
  UPSTREAM_POS_DEADLINE_MS: {
    doc: 'How long a POS payment call may last: the provider holds it until the terminal decides, and its clients must wait at least 180 s (at least 180000 in production); every other POS call has UPSTREAM_DEADLINE_MS',
    default: '200000',
  },
  UPSTREAM_POS_POOL_CONNECTIONS: {
    doc: 'Connections to the POS interface; each payment waiting at a terminal holds one',
    default: '128',
  },
  POS_SYNC_WAIT_MS: {
    doc: 'The longest a facade POS request waits for the terminal before answering 202 with the transaction to poll',
    default: '25000',
  },
  SECRETS_KEY: {
    unset:
      'sandbox mode: a development key in SANDBOX_CERTS_DIR; production: secrets cannot be stored',
    doc: 'Key (32 bytes, base64 or hex: openssl rand -base64 32) that encrypts the secrets Portico keeps at rest (AES-256-GCM): merchant keys, webhook signing secrets',
    secret: true,
  },
  SECRETS_KEYS: {
    unset: 'none: only SECRETS_KEY opens',
    doc: 'Further keys, comma-separated, that open the secrets they sealed but seal nothing: the previous SECRETS_KEY during a rotation, until the re-seal job has moved every value to SECRETS_KEY (docs/operations.md, Rotating keys)',
    secret: true,
  },
  SECRETS_RESEAL_INTERVAL_MS: {
    doc: 'How often the secrets sealed with another key than SECRETS_KEY are sealed again with it, in batches, and the values per key counted (portico_sealed_values); 0: never on this replica',
    default: '60000',
  },
  RESOLVER_INTERVAL_MS: {
    doc: 'How often the resolver settles consents and payments in doubt with the provider (0: never, but at start)',
    default: '15000',
  },
  PROVIDER_SYNC_INTERVAL_MS: {
    doc: 'How often pending notifications, IRIS sessions, POS transactions in doubt and payments after a refund are read from the provider; the shortest pause between two reads of one, which grows with its age (0: never on this replica)',
    default: '2000',
  },
  RESOLVER_GIVE_UP_AFTER_MS: {
    doc: 'Age after which a write in doubt that the provider offers no lookup for is marked failed (its lifetime there)',
    default: '86400000',
  },
  RESOLVER_CONSENT_SCA_WINDOW_MS: {
    doc: "Age after which a consent whose creation answer never arrived is marked failed: its SCA link was in that answer, so no user can authorise it, and without the bank's id it cannot be used (the window a user has to authorise one)",
    default: '3600000',
  },
  RECONCILIATION_INTERVAL_MS: {
    doc: "How often a replica looks for reconciliation windows due: each tenant's previous day (once) and its rolling recent window (once an interval, across replicas); 0: never on this replica",
    default: '3600000',
  },
  RECONCILIATION_RECENT_DAYS: {
    doc: 'Days of the rolling recent window reconciled every interval, today included (0: only the previous day)',
    default: '1',
  },
  RECONCILIATION_REQUESTS_PER_SECOND: {
    doc: "Provider calls a second that reconciliation makes for one tenant on one replica (the provider's list pages and reads by id)",
    default: '5',
  },
  RECONCILIATION_LEASE_MS: {
    doc: 'How long a reconciliation run holds its window without renewing it (it renews after every page of a list and every read by id); a run whose process died is started again once it lapses',
    default: '60000',
  },
  RECONCILIATION_FINAL_SAMPLE: {
    doc: 'Resources in a final status read by id in each reconciliation run of a capability without a provider list (open-banking consents and payments, POS transactions), chosen at random from the window, besides every one not final there (0: none)',
    default: '10',
  },
  AUDIT_SEAL_INTERVAL_MS: {
    doc: 'How often the audit trail is sealed into the tamper-evident chain (0: never)',
    default: '1000',
  },
  AUDIT_SEAL_GRACE_MS: {
    doc: 'Age a status change or access-log row reaches before it is sealed (a call still in flight waits for the upstream deadline too)',
    default: '2000',
  },
  AUDIT_CHECKPOINT_INTERVAL_MS: {
    doc: 'How often the head of the audit chain is signed into a checkpoint (0: never)',
    default: '3600000',
  },
  AUDIT_RETENTION_DAYS: {
    doc: 'Days the audit trail is kept (PSD2 Art. 21: five years); older rows are removed at a signed checkpoint (0: for ever)',
    default: '1827',
  },
  AUDIT_RETENTION_INTERVAL_MS: {
    doc: 'How often the retention job runs (0: never)',
    default: '86400000',
  },
  AUDIT_VERIFY_INTERVAL_MS: {
    doc: 'How often one replica verifies the audit chain from the newest checkpoint a verification passed (what was sealed since), and records the result (portico_audit_last_verification_*); 0: never. A full walk: npm run cli -- audit:verify --full',
    default: '86400000',
  },
  AUDIT_PARTITION_INTERVAL_MS: {
    doc: 'How often one replica creates the monthly partitions of the access log and the audit chain for the current month and the three after it, if missing (also at start; 0: never)',
    default: '86400000',
  },
  AUDIT_ARCHIVE_DIR: {
    doc: 'Directory the archives of closed months of the audit trail are written to (portico-audit-YYYY-MM.jsonl.gz, docs/audit-and-webhooks.md); retention drops a month only once its archive is there and reads back whole',
    default: './data/audit-archives',
  },
  AUDIT_ARCHIVE_INTERVAL_MS: {
    doc: 'How often one replica archives the closed months of the audit trail not archived yet (a month is closed once it is over, every row of it sealed and a signed checkpoint covers its last link; 0: never)',
    default: '86400000',
  },
  AUDIT_SIGNING_KEY: {
    unset:
      'sandbox mode: a development key in SANDBOX_CERTS_DIR; production: checkpoints are not signed',
    doc: 'Ed25519 private key (PKCS#8 PEM: openssl genpkey -algorithm ed25519) that signs audit checkpoints; without one in production the chain is sealed but its checkpoints are not signed, and retention removes nothing',
    secret: true,
  },
  AUDIT_TRUSTED_KEYS_FILE: {
    unset: "only AUDIT_SIGNING_KEY's checkpoints verify",
    doc: 'PEM file of the public keys (SPKI, openssl pkey -pubout) of retired audit signing keys: their checkpoints still verify; a checkpoint signed by a key neither this nor AUDIT_SIGNING_KEY names is a break (checkpoint-unknown-key). See docs/operations.md, Rotating keys',
  },
  RECONCILE_ON_START: {
    doc: 'true: resolve consents and payments a crash left half-written against the bank at start',
    default: 'true',
  },
  OPEN_BANKING_SERVICES: {
    doc: `Comma-separated services offered: ${OPEN_BANKING_SERVICES_DOC}`,
    default: 'ais,cof,pis',
  },
  WEBHOOK_WORKER_INTERVAL_MS: {
    doc: 'How often an idle webhook delivery worker looks for due attempts; a busy one claims again as each attempt ends (0: no worker on this replica)',
    default: '1000',
  },
  WEBHOOK_CONCURRENCY: { doc: 'Webhook attempts one replica runs at once', default: '8' },
  WEBHOOK_ENDPOINT_CONCURRENCY: {
    doc: 'Webhook attempts to one endpoint in flight at once, over all replicas (an endpoint that is failing gets one)',
    default: '4',
  },
  WEBHOOK_TENANT_SHARE_PERCENT: {
    doc: "The share of a replica's WEBHOOK_CONCURRENCY one tenant's deliveries may hold at once (at least one attempt), so that no tenant's backlog holds the others'",
    default: '50',
  },
  WEBHOOK_PAUSE_AFTER_MS: {
    doc: 'A webhook endpoint whose every attempt has failed for this long is paused (a webhook_endpoint.paused event) until resumed through the API or the CLI',
    default: '432000000',
  },
  WEBHOOK_RETRY_SCHEDULE_MS: {
    doc: 'Comma-separated pauses before each webhook retry (the last repeats), in milliseconds',
    default: '5000,30000,120000,600000,3600000,14400000,43200000',
  },
  WEBHOOK_RETRY_JITTER_PERCENT: {
    doc: 'Each webhook retry pause is varied at random by up to this many percent',
    default: '20',
  },
  WEBHOOK_MAX_ATTEMPTS: {
    doc: 'Attempts of one webhook delivery before it is dead-lettered',
    default: '8',
  },
  WEBHOOK_TIMEOUT_MS: {
    doc: 'How long one webhook attempt may take (connect, send, answer)',
    default: '15000',
  },
  WEBHOOK_LEASE_MS: {
    doc: "How long a claimed webhook attempt is one replica's (more than WEBHOOK_TIMEOUT_MS); a crashed replica's attempt is retried after it",
    default: '60000',
  },
  WEBHOOK_SECRET_GRACE_MS: {
    doc: 'How long the previous endpoint secret still signs (a second signature) after a rotation',
    default: '86400000',
  },
  WEBHOOK_RENEWAL_DUE_DAYS: {
    doc: 'consent.renewal_due is sent this many days before scaRenewalDueAt or validUntil',
    default: '14',
  },
  WEBHOOK_RENEWAL_INTERVAL_MS: {
    doc: 'How often the consent.renewal_due job runs (0: never on this replica)',
    default: '3600000',
  },
  SANDBOX_CERTS_DIR: {
    doc: 'Development certificates and keys of sandbox mode (made by npm run certs, and by npm start when missing)',
    default: './certs/dev',
  },
  SANDBOX_HOST: { doc: 'Interface the sandbox listens on', default: '127.0.0.1' },
  SANDBOX_OB_PORT: {
    doc: "Port of the sandbox's open-banking API (mutual TLS); 0 = any free port",
    default: '8443',
  },
  SANDBOX_SCA_PORT: {
    doc: "Port of the sandbox's SCA pages and controls (plain HTTP, for browsers); 0 = any free port",
    default: '8081',
  },
  SANDBOX_SCA_PUBLIC_URL: {
    unset: 'http://localhost:<the SCA port bound>',
    doc: 'Address browsers reach the SCA pages and hosted payment pages at',
  },
  SANDBOX_CARD_PORT: {
    doc: "Port of the sandbox's card API (server TLS, Basic auth with a merchant's keys); 0 = any free port",
    default: '8444',
  },
  SANDBOX_POS_PORT: {
    doc: "Port of the sandbox's POS terminal interface (server TLS, Basic auth with a merchant's p_ key); 0 = any free port",
    default: '8445',
  },
} satisfies Record<string, VariableSpec>;

export type VariableName = keyof typeof VARIABLES;

/** How the reference (docs/configuration.md, .env.example) groups the variables, in this order. */
export const VARIABLE_GROUPS: { title: string; about?: string; names: VariableName[] }[] = [
  {
    title: 'Mode',
    names: ['PORTICO_MODE'],
  },
  {
    title: 'HTTP',
    names: [
      'HOST',
      'PORT',
      'PUBLIC_BASE_URL',
      'BODY_LIMIT_BYTES',
      'GATEWAY_WORKERS',
      'SHUTDOWN_TIMEOUT_MS',
      'RATE_LIMIT_PER_MINUTE',
      'KEY_CACHE_TTL_MS',
    ],
  },
  {
    title: 'Logs and metrics',
    about:
      'Logs are JSON lines on standard output, scrubbed of keys and card numbers. Metrics are Prometheus text at http://METRICS_HOST:METRICS_PORT/metrics, a listener apart from the API port.',
    names: ['LOG_LEVEL', 'METRICS_HOST', 'METRICS_PORT'],
  },
  {
    title: 'Tracing (OpenTelemetry)',
    about:
      "Every request has a W3C trace id (the caller's traceparent, or a new one): on every log line, in problem bodies and in the traceparent sent to the provider. Spans are exported only when an endpoint is set (docs/tracing.md).",
    names: [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_SERVICE_NAME',
      'OTEL_TRACES_SAMPLER',
      'OTEL_TRACES_SAMPLER_ARG',
      'OTEL_BSP_SCHEDULE_DELAY',
    ],
  },
  {
    title: 'Database',
    names: ['DATABASE_URL', 'DATABASE_POOL_SIZE', 'EMBEDDED_DB_DIR', 'DB_ANALYZE_INTERVAL_MS'],
  },
  {
    title: 'Open-banking upstream',
    about:
      'Required when PORTICO_MODE=production: the address, the QWAC (two PEM files or one PKCS#12 file) and the CAs of the provider. Sandbox mode uses the development certificates.',
    names: [
      'UPSTREAM_OB_BASE_URL',
      'UPSTREAM_CLIENT_CERT_FILE',
      'UPSTREAM_CLIENT_KEY_FILE',
      'UPSTREAM_CLIENT_P12_FILE',
      'UPSTREAM_CLIENT_KEY_PASSPHRASE',
      'UPSTREAM_CA_FILE',
      'UPSTREAM_CLIENT_CA_FILE',
      'UPSTREAM_CLIENT_CERT_RECHECK_MS',
      'OPEN_BANKING_SERVICES',
    ],
  },
  {
    title: 'Card and POS upstreams',
    about: 'Each tenant is its own merchant at the provider, called with its own keys.',
    names: [
      'UPSTREAM_CARD_BASE_URL',
      'UPSTREAM_CARD_PAYFORM_URL',
      'UPSTREAM_CARD_TOKENIZATION_URL',
      'UPSTREAM_CARD_CA_FILE',
      'UPSTREAM_POS_BASE_URL',
      'UPSTREAM_POS_DEADLINE_MS',
      'UPSTREAM_POS_POOL_CONNECTIONS',
      'POS_SYNC_WAIT_MS',
    ],
  },
  {
    title: 'Upstream transport',
    about:
      'The one seam every upstream call goes through (open banking, card, POS): its timeouts, pool, deadline, retries and circuit breaker.',
    names: [
      'UPSTREAM_CONNECT_TIMEOUT_MS',
      'UPSTREAM_HEADERS_TIMEOUT_MS',
      'UPSTREAM_BODY_TIMEOUT_MS',
      'UPSTREAM_POOL_CONNECTIONS',
      'UPSTREAM_KEEPALIVE_MS',
      'UPSTREAM_DEADLINE_MS',
      'UPSTREAM_RETRY_DELAYS_MS',
      'UPSTREAM_BREAKER_FAILURES',
      'UPSTREAM_BREAKER_OPEN_MS',
    ],
  },
  {
    title: 'Secrets at rest',
    names: ['SECRETS_KEY', 'SECRETS_KEYS', 'SECRETS_RESEAL_INTERVAL_MS'],
  },
  {
    title: 'Writes in doubt and the provider sync',
    names: [
      'RECONCILE_ON_START',
      'RESOLVER_INTERVAL_MS',
      'RESOLVER_GIVE_UP_AFTER_MS',
      'RESOLVER_CONSENT_SCA_WINDOW_MS',
      'PROVIDER_SYNC_INTERVAL_MS',
    ],
  },
  {
    title: 'Reconciliation',
    names: [
      'RECONCILIATION_INTERVAL_MS',
      'RECONCILIATION_RECENT_DAYS',
      'RECONCILIATION_FINAL_SAMPLE',
      'RECONCILIATION_REQUESTS_PER_SECOND',
      'RECONCILIATION_LEASE_MS',
    ],
  },
  {
    title: 'Audit chain',
    names: [
      'AUDIT_SEAL_INTERVAL_MS',
      'AUDIT_SEAL_GRACE_MS',
      'AUDIT_CHECKPOINT_INTERVAL_MS',
      'AUDIT_RETENTION_DAYS',
      'AUDIT_RETENTION_INTERVAL_MS',
      'AUDIT_VERIFY_INTERVAL_MS',
      'AUDIT_PARTITION_INTERVAL_MS',
      'AUDIT_ARCHIVE_DIR',
      'AUDIT_ARCHIVE_INTERVAL_MS',
      'AUDIT_SIGNING_KEY',
      'AUDIT_TRUSTED_KEYS_FILE',
    ],
  },
  {
    title: 'Webhooks to apps',
    names: [
      'WEBHOOK_WORKER_INTERVAL_MS',
      'WEBHOOK_CONCURRENCY',
      'WEBHOOK_ENDPOINT_CONCURRENCY',
      'WEBHOOK_TENANT_SHARE_PERCENT',
      'WEBHOOK_PAUSE_AFTER_MS',
      'WEBHOOK_RETRY_SCHEDULE_MS',
      'WEBHOOK_RETRY_JITTER_PERCENT',
      'WEBHOOK_MAX_ATTEMPTS',
      'WEBHOOK_TIMEOUT_MS',
      'WEBHOOK_LEASE_MS',
      'WEBHOOK_SECRET_GRACE_MS',
      'WEBHOOK_RENEWAL_DUE_DAYS',
      'WEBHOOK_RENEWAL_INTERVAL_MS',
    ],
  },
  {
    title: 'Sandbox',
    about:
      'Read in sandbox mode, where npm start runs the sandbox in the process; npm run sandbox (the sandbox alone) reads the same variables, and DATABASE_URL for its state.',
    names: [
      'SANDBOX_CERTS_DIR',
      'SANDBOX_HOST',
      'SANDBOX_OB_PORT',
      'SANDBOX_SCA_PORT',
      'SANDBOX_SCA_PUBLIC_URL',
      'SANDBOX_CARD_PORT',
      'SANDBOX_POS_PORT',
    ],
  },
];

/** Reads, validates and types the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const raw = (name: VariableName): string | undefined => {
    const spec: VariableSpec = VARIABLES[name];
    const fileVar = `${name}_FILE`;
    if (spec.secret && env[fileVar]) {
      if (env[name]) problems.push(`${name}: set either ${name} or ${fileVar}, not both`);
      try {
        return readFileSync(env[fileVar] as string, 'utf8').trim();
      } catch (error) {
        problems.push(
          `${fileVar}: cannot read ${env[fileVar]} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        );
        return undefined;
      }
    }
    const value = env[name];
    return value === undefined || value === '' ? spec.default : value;
  };
  const integer = (name: VariableName, min: number, max: number): number => {
    const value = raw(name) as string;
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      problems.push(`${name}: must be a whole number from ${min} to ${max} (got "${value}")`);
      return min;
    }
    return n;
  };
  const oneOf = <T extends string>(name: VariableName, allowed: readonly T[]): T => {
    const value = raw(name) as string;
    if (!allowed.includes(value as T))
      problems.push(`${name}: must be one of ${allowed.join(', ')} (got "${value}")`);
    return value as T;
  };
  const integers = (name: VariableName, min: number, max: number): number[] => {
    const value = raw(name) ?? '';
    const parts = value === 'none' ? [] : value.split(',').map((part) => part.trim());
    if (parts.some((part) => !/^\d+$/.test(part) || Number(part) < min || Number(part) > max)) {
      problems.push(
        `${name}: must be comma-separated whole numbers from ${min} to ${max}, or none (got "${value}")`,
      );
      return [];
    }
    return parts.map(Number);
  };
  const list = <T extends string>(name: VariableName, allowed: readonly T[]): T[] => {
    const values = (raw(name) ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean);
    const unknown = values.filter((value) => !allowed.includes(value as T));
    if (unknown.length > 0)
      problems.push(
        `${name}: unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`,
      );
    return [...new Set(values)] as T[];
  };
  const portOrOff = (name: VariableName): number | undefined => {
    const value = raw(name) as string;
    if (value === 'off') return undefined;
    if (/^\d+$/.test(value) && Number(value) <= 65535) return Number(value);
    problems.push(`${name}: must be a port from 0 to 65535, or off (got "${value}")`);
    return undefined;
  };
  const url = (name: VariableName, protocols: string[]): string | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name}: must be a ${protocols.join(' or ')} URL (got "${redactUrl(value)}")`);
      return undefined;
    }
  };

  const ratio = (name: VariableName): number => {
    const value = raw(name) as string;
    const n = Number(value);
    if (!/^(0|1|0?\.\d+|1\.0*)$/.test(value) || n < 0 || n > 1) {
      problems.push(`${name}: must be a number from 0 to 1 (got "${value}")`);
      return 1;
    }
    return n;
  };

  const mode = oneOf('PORTICO_MODE', ['sandbox', 'production'] as const);
  const upstreamHttp = (): UpstreamHttpConfig => ({
    connectTimeoutMs: integer('UPSTREAM_CONNECT_TIMEOUT_MS', 1, 600_000),
    headersTimeoutMs: integer('UPSTREAM_HEADERS_TIMEOUT_MS', 1, 600_000),
    bodyTimeoutMs: integer('UPSTREAM_BODY_TIMEOUT_MS', 1, 600_000),
    poolConnections: integer('UPSTREAM_POOL_CONNECTIONS', 1, 1024),
    keepAliveTimeoutMs: integer('UPSTREAM_KEEPALIVE_MS', 1, 600_000),
    deadlineMs: integer('UPSTREAM_DEADLINE_MS', 1, 600_000),
    retryDelaysMs: integers('UPSTREAM_RETRY_DELAYS_MS', 0, 60_000),
    breaker: {
      failureThreshold: integer('UPSTREAM_BREAKER_FAILURES', 1, 1000),
      openMs: integer('UPSTREAM_BREAKER_OPEN_MS', 1, 600_000),
    },
  });
  const posPaymentDeadlineMs = integer('UPSTREAM_POS_DEADLINE_MS', 1, 600_000);
  // A POS payment waits for the payer: its answer headers may take the whole payment deadline (the
  // seam's deadline, per operation, ends every other call sooner).
  const posHttp = (): UpstreamHttpConfig => {
    const ordinary = upstreamHttp();
    return {
      ...ordinary,
      headersTimeoutMs: Math.max(ordinary.headersTimeoutMs, posPaymentDeadlineMs),
      poolConnections: integer('UPSTREAM_POS_POOL_CONNECTIONS', 1, 4096),
      // Its reads are cheap and its writes never retried; one retry of a read is enough.
      retryDelaysMs: [200],
    };
  };
  const host = raw('HOST') as string;
  const port = integer('PORT', 0, 65535);
  const config: AppConfig = {
    mode,
    http: {
      host,
      port,
      publicBaseUrl:
        url('PUBLIC_BASE_URL', ['http:', 'https:']) ??
        `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      bodyLimitBytes: integer('BODY_LIMIT_BYTES', 1024, 100 * 1024 * 1024),
      shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 0, 600_000),
      workers:
        raw('GATEWAY_WORKERS') === 'auto'
          ? availableParallelism()
          : integer('GATEWAY_WORKERS', 1, 64),
      rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 1, 1_000_000),
      keyCacheTtlMs: integer('KEY_CACHE_TTL_MS', 0, 60_000),
    },
    log: { level: oneOf('LOG_LEVEL', LOG_LEVELS) },
    tracing: {
      endpoint: url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
      headers: otlpHeaders(raw('OTEL_EXPORTER_OTLP_HEADERS'), problems),
      serviceName: raw('OTEL_SERVICE_NAME') as string,
      sampler: oneOf('OTEL_TRACES_SAMPLER', TRACE_SAMPLERS),
      samplerRatio: ratio('OTEL_TRACES_SAMPLER_ARG'),
      exportDelayMs: integer('OTEL_BSP_SCHEDULE_DELAY', 1, 600_000),
    },
    metrics: {
      host: raw('METRICS_HOST') as string,
      port: portOrOff('METRICS_PORT'),
    },
    database: {
      url: url('DATABASE_URL', ['postgres:', 'postgresql:']),
      poolSize: integer('DATABASE_POOL_SIZE', 1, 200),
      embeddedDir: raw('EMBEDDED_DB_DIR') as string,
      analyzeIntervalMs: integer('DB_ANALYZE_INTERVAL_MS', 0, 86_400_000),
    },
    upstreams: {
      openBanking: {
        baseUrl: url('UPSTREAM_OB_BASE_URL', ['https:']),
        qwac: {
          certFile: raw('UPSTREAM_CLIENT_CERT_FILE'),
          keyFile: raw('UPSTREAM_CLIENT_KEY_FILE'),
          keyPassphrase: raw('UPSTREAM_CLIENT_KEY_PASSPHRASE'),
          p12File: raw('UPSTREAM_CLIENT_P12_FILE'),
          caFile: raw('UPSTREAM_CA_FILE'),
          clientCaFile: raw('UPSTREAM_CLIENT_CA_FILE'),
          recheckMs: integer('UPSTREAM_CLIENT_CERT_RECHECK_MS', 0, 3_600_000),
        },
        http: upstreamHttp(),
      },
      card: {
        baseUrl: url('UPSTREAM_CARD_BASE_URL', ['https:']),
        payformUrl: url('UPSTREAM_CARD_PAYFORM_URL', ['https:']),
        tokenizationUrl: url('UPSTREAM_CARD_TOKENIZATION_URL', ['https:']),
        caFile: raw('UPSTREAM_CARD_CA_FILE'),
        http: upstreamHttp(),
        sandboxControlUrl:
          mode === 'sandbox'
            ? (url('SANDBOX_SCA_PUBLIC_URL', ['http:', 'https:']) ??
              `http://localhost:${integer('SANDBOX_SCA_PORT', 0, 65535)}`)
            : undefined,
      },
      pos: {
        baseUrl: url('UPSTREAM_POS_BASE_URL', ['https:']),
        caFile: raw('UPSTREAM_CARD_CA_FILE'),
        http: posHttp(),
        paymentDeadlineMs: posPaymentDeadlineMs,
        syncWaitMs: integer('POS_SYNC_WAIT_MS', 0, 600_000),
      },
    },
    secrets: {
      key: raw('SECRETS_KEY'),
      previousKeys: secretsKeys(raw('SECRETS_KEYS'), problems),
      resealIntervalMs: integer('SECRETS_RESEAL_INTERVAL_MS', 0, 86_400_000),
    },
    openBankingServices: list('OPEN_BANKING_SERVICES', OPEN_BANKING_SERVICES),
    reconcileOnStart: oneOf('RECONCILE_ON_START', ['true', 'false'] as const) === 'true',
    resolver: {
      intervalMs: integer('RESOLVER_INTERVAL_MS', 0, 86_400_000),
      giveUpAfterMs: integer('RESOLVER_GIVE_UP_AFTER_MS', 1000, 31 * 86_400_000),
      consentScaWindowMs: integer('RESOLVER_CONSENT_SCA_WINDOW_MS', 1000, 31 * 86_400_000),
    },
    providerSync: { intervalMs: integer('PROVIDER_SYNC_INTERVAL_MS', 0, 86_400_000) },
    reconciliation: {
      intervalMs: integer('RECONCILIATION_INTERVAL_MS', 0, 86_400_000),
      recentDays: integer('RECONCILIATION_RECENT_DAYS', 0, 31),
      requestsPerSecond: integer('RECONCILIATION_REQUESTS_PER_SECOND', 1, 1000),
      leaseMs: integer('RECONCILIATION_LEASE_MS', 1000, 3_600_000),
      finalSample: integer('RECONCILIATION_FINAL_SAMPLE', 0, 1000),
    },
    audit: {
      sealIntervalMs: integer('AUDIT_SEAL_INTERVAL_MS', 0, 3_600_000),
      sealGraceMs: integer('AUDIT_SEAL_GRACE_MS', 0, 600_000),
      checkpointIntervalMs: integer('AUDIT_CHECKPOINT_INTERVAL_MS', 0, 31 * 86_400_000),
      retentionDays: integer('AUDIT_RETENTION_DAYS', 0, 36_500),
      retentionIntervalMs: integer('AUDIT_RETENTION_INTERVAL_MS', 0, 31 * 86_400_000),
      verifyIntervalMs: integer('AUDIT_VERIFY_INTERVAL_MS', 0, 31 * 86_400_000),
      partitionIntervalMs: integer('AUDIT_PARTITION_INTERVAL_MS', 0, 31 * 86_400_000),
      archiveDir: raw('AUDIT_ARCHIVE_DIR') as string,
      archiveIntervalMs: integer('AUDIT_ARCHIVE_INTERVAL_MS', 0, 31 * 86_400_000),
      signingKeyPem: raw('AUDIT_SIGNING_KEY'),
      trustedKeysFile: raw('AUDIT_TRUSTED_KEYS_FILE'),
    },
    webhooks: {
      workerIntervalMs: integer('WEBHOOK_WORKER_INTERVAL_MS', 0, 3_600_000),
      concurrency: integer('WEBHOOK_CONCURRENCY', 1, 256),
      endpointConcurrency: integer('WEBHOOK_ENDPOINT_CONCURRENCY', 1, 256),
      tenantSharePercent: integer('WEBHOOK_TENANT_SHARE_PERCENT', 1, 100),
      pauseAfterMs: integer('WEBHOOK_PAUSE_AFTER_MS', 1, 365 * 86_400_000),
      retryScheduleMs: integers('WEBHOOK_RETRY_SCHEDULE_MS', 0, 7 * 86_400_000),
      jitterPercent: integer('WEBHOOK_RETRY_JITTER_PERCENT', 0, 100),
      maxAttempts: integer('WEBHOOK_MAX_ATTEMPTS', 1, 100),
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', 1, 300_000),
      leaseMs: integer('WEBHOOK_LEASE_MS', 1, 3_600_000),
      secretGraceMs: integer('WEBHOOK_SECRET_GRACE_MS', 0, 30 * 86_400_000),
      renewalDueDays: integer('WEBHOOK_RENEWAL_DUE_DAYS', 0, 365),
      renewalIntervalMs: integer('WEBHOOK_RENEWAL_INTERVAL_MS', 0, 31 * 86_400_000),
    },
    sandbox: {
      certsDir: raw('SANDBOX_CERTS_DIR') as string,
      host: raw('SANDBOX_HOST') as string,
      openBankingPort: integer('SANDBOX_OB_PORT', 0, 65535),
      scaPort: integer('SANDBOX_SCA_PORT', 0, 65535),
      cardPort: integer('SANDBOX_CARD_PORT', 0, 65535),
      posPort: integer('SANDBOX_POS_PORT', 0, 65535),
      scaPublicUrl: url('SANDBOX_SCA_PUBLIC_URL', ['http:', 'https:']),
    },
  };
  if (config.webhooks.leaseMs <= config.webhooks.timeoutMs)
    problems.push(
      `WEBHOOK_LEASE_MS: must be longer than WEBHOOK_TIMEOUT_MS (${config.webhooks.timeoutMs}), else two replicas could run one attempt`,
    );
  if (config.webhooks.retryScheduleMs.length === 0 && config.webhooks.maxAttempts > 1)
    problems.push(
      'WEBHOOK_RETRY_SCHEDULE_MS: needs at least one pause when WEBHOOK_MAX_ATTEMPTS > 1',
    );
  if (config.metrics.port && config.metrics.port === port)
    problems.push(
      `METRICS_PORT: must differ from PORT (${port}); metrics are not served on the API port`,
    );
  if (mode === 'production' && config.upstreams.pos.paymentDeadlineMs < 180_000)
    problems.push(
      'UPSTREAM_POS_DEADLINE_MS: must be at least 180000 (the provider asks POS clients to wait 180 s)',
    );
  if (mode === 'production') {
    for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, VariableSpec][]) {
      if (spec.production && raw(name) === undefined)
        problems.push(`${name}: required when PORTICO_MODE=production`);
    }
    const pem =
      raw('UPSTREAM_CLIENT_CERT_FILE') !== undefined ||
      raw('UPSTREAM_CLIENT_KEY_FILE') !== undefined;
    const p12 = raw('UPSTREAM_CLIENT_P12_FILE') !== undefined;
    if (pem && p12)
      problems.push(
        'UPSTREAM_CLIENT_P12_FILE: set either it or UPSTREAM_CLIENT_CERT_FILE and UPSTREAM_CLIENT_KEY_FILE, not both',
      );
    else if (!p12) {
      for (const name of ['UPSTREAM_CLIENT_CERT_FILE', 'UPSTREAM_CLIENT_KEY_FILE'] as const) {
        if (raw(name) === undefined)
          problems.push(
            `${name}: required when PORTICO_MODE=production (or give UPSTREAM_CLIENT_P12_FILE)`,
          );
      }
    }
  }
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  return config;
}

/** SECRETS_KEYS: comma-separated keys, each 32 bytes as 64 hex digits or base64; never shown. */
function secretsKeys(value: string | undefined, problems: string[]): string[] {
  const keys = (value ?? '')
    .split(/[,\s]+/)
    .map((key) => key.trim())
    .filter(Boolean);
  keys.forEach((key, index) => {
    const bytes = /^[0-9a-fA-F]{64}$/.test(key)
      ? Buffer.from(key, 'hex')
      : Buffer.from(key, 'base64');
    if (bytes.length !== 32)
      problems.push(
        `SECRETS_KEYS: key ${index + 1} must be 32 bytes, as 64 hex digits or base64 (not shown)`,
      );
  });
  return keys;
}

/** OTEL_EXPORTER_OTLP_HEADERS (`key=value,key2=value2`, values percent-encoded); its values are never shown. */
function otlpHeaders(value: string | undefined, problems: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const pair of value.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    let decoded: string | undefined;
    try {
      decoded = at > 0 ? decodeURIComponent(pair.slice(at + 1).trim()) : undefined;
    } catch {
      decoded = undefined;
    }
    if (
      !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) ||
      decoded === undefined ||
      /[\r\n]/.test(decoded)
    ) {
      problems.push(
        'OTEL_EXPORTER_OTLP_HEADERS: must be comma-separated key=value pairs with percent-encoded values',
      );
      return {};
    }
    headers[key] = decoded;
  }
  return headers;
}

/** Hides the password of a URL so that it can be shown in messages. */
export function redactUrl(value: string): string {
  return value.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
