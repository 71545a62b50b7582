// The CLI's commands as its usage names them. Each command's code (and the part of the application it
// needs) is imported only when the command runs, once its arguments are checked: `--help` and an
// argument error answer without loading Nest, a command loads only its own modules.
import type { INestApplicationContext, ModuleMetadata } from '@nestjs/common';
import { API_KEY_ROLES } from '../access/tenants/api-key-roles.js';
import { WEBHOOK_EVENT_TYPE_NAMES } from '../webhooks/webhook-event-types.js';
import { loadConfig, type AppConfig } from '../platform/config/app-config.js';
import { withSandboxUpstreams } from '../platform/config/running-instance.js';
import { isUuid } from '../shared/uuid.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CommandContext {
  args: ParsedArgs;
  app: INestApplicationContext;
  out: (line: string) => void;
}

export interface ParsedArgs {
  positional: string[];
  options: ReturnType<typeof parseArgs>['values'];
}

interface Command {
  summary: string;
  synopsis: string;
  /** How many positional arguments the synopsis names. */
  positionals: number;
  /** The command's --options; every other option is refused. */
  options?: NonNullable<ParseArgsConfig['options']>;
  /**
   * The Nest modules its code uses, beside the configuration, logging, scheduler, metrics and the
   * database (src/cli/cli.module.ts); none: it works without the database.
   */
  modules?: () => Promise<CliImports>;
  /** The configuration the command's application is made with, when it needs more than the rest. */
  configure?(config: AppConfig): AppConfig;
  /** For a command with modules that needs the database only for some arguments: whether these do. */
  needsDatabase?(args: ParsedArgs): boolean;
  run(context: CommandContext): Promise<number>;
}

export type CliImports = NonNullable<ModuleMetadata['imports']>;

/** A command was given arguments it cannot work with (exit 1). */
class UsageError extends Error {}

/** The command line does not fit the command's synopsis: an unknown option, a missing value (exit 2). */
export class ArgumentError extends Error {
  constructor(
    message: string,
    readonly synopsis: string,
  ) {
    super(message);
  }
}

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

/** The arguments after the command's name, checked against what the command takes. */
export function parseCommandArgs(name: string, command: Command, argv: string[]): ParsedArgs {
  const fail = (message: string): never => {
    throw new ArgumentError(`${name}: ${message}`, command.synopsis);
  };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...command.options, ...HELP },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const { code, message } = error as Error & { code?: string };
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(message)?.[1] ?? message;
      const known = Object.keys(command.options ?? {}).map((key) => `--${key}`);
      return fail(
        `unknown option ${option} (${known.length ? `it takes ${known.join(', ')}` : 'it takes no options'})`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = /'(-[^' ]+)/.exec(message)?.[1] ?? message;
      return fail(`option ${option} needs a value (write ${option}=-x for one that starts with -)`);
    }
    if (code?.startsWith('ERR_PARSE_ARGS_')) return fail(message);
    throw error;
  }
  if (!parsed.values.help && parsed.positionals.length > command.positionals)
    fail(
      `unexpected argument ${JSON.stringify(parsed.positionals[command.positionals])} (quote a value that has spaces)`,
    );
  return { positional: parsed.positionals, options: parsed.values };
}

export function required(args: ParsedArgs, index: number, what: string): string {
  const value = args.positional[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** A positional argument that must be an id (a UUID), checked before it reaches a uuid column. */
export function requiredId(args: ParsedArgs, index: number, what: string): string {
  const value = required(args, index, what);
  if (!isUuid(value))
    throw new UsageError(`${what} must be an id as the list shows it (a UUID), not "${value}"`);
  return value;
}

export function table(rows: Record<string, string>[]): string[] {
  if (rows.length === 0) return ['(none)'];
  const columns = Object.keys(rows[0]);
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => row[column].length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((row) => line(columns.map((column) => row[column])))];
}

const tenants = () => import('./tenant-commands.js');
const audit = () => import('./audit-commands.js');
const webhooks = () => import('./webhook-commands.js');
const cardCredentials = () => import('./card-credentials-commands.js');
const secrets = () => import('./secrets-commands.js');
const files = () => import('./file-commands.js');
const reconciliation = () => import('./reconcile-command.js');
const modulesOf = (load: () => Promise<{ MODULES: CliImports }>) => async () =>
  (await load()).MODULES;

export const COMMANDS: Record<string, Command> = {
  'tenant:create': {
    summary: 'Create a tenant (one fintech app)',
    synopsis: 'tenant:create <slug> [--name "Display name"]',
    positionals: 1,
    options: { name: { type: 'string' } },
    modules: modulesOf(tenants),
    run: async (context) => (await tenants()).createTenant(context),
  },
  'tenant:list': {
    summary: 'List tenants',
    synopsis: 'tenant:list',
    positionals: 0,
    modules: modulesOf(tenants),
    run: async (context) => (await tenants()).listTenants(context),
  },
  'key:issue': {
    summary: 'Issue an API key for a tenant; the key is printed once and stored only as a hash',
    synopsis: `key:issue <tenant slug or id> --role ${API_KEY_ROLES.join('|')} [--label "what it is for"]`,
    positionals: 1,
    options: { role: { type: 'string' }, label: { type: 'string' } },
    modules: modulesOf(tenants),
    run: async (context) => (await tenants()).issueKey(context),
  },
  'key:list': {
    summary: "List a tenant's API keys (never the keys themselves)",
    synopsis: 'key:list <tenant slug or id>',
    positionals: 1,
    modules: modulesOf(tenants),
    run: async (context) => (await tenants()).listKeys(context),
  },
  'key:revoke': {
    summary: 'Revoke an API key; it stops working on the next request, on every replica',
    synopsis: 'key:revoke <key id>',
    positionals: 1,
    modules: modulesOf(tenants),
    run: async (context) => (await tenants()).revokeKey(context),
  },
};

/**
 * Whether `audit:verify --archive` verifies its files alone: asked (`--offline`), or no database is
 * configured and none asked for (`--live`: the embedded engine).
 */
export function archivesOffline(options: ParsedArgs['options']): boolean {
  return !!options.offline || !(options.live || loadConfig().database.url);
}

COMMANDS['audit:verify'] = {
  summary:
    'Verify the tamper-evident audit chain (links, rows, signed checkpoints) from the newest checkpoint verified before (--full: from its start); with --archive, archive files of closed months, offline and, when a database is configured (DATABASE_URL, or --live for the embedded engine), joined to the live chain; exit 1 at the first break',
  synopsis:
    'audit:verify [--json] [--seal] [--full] | audit:verify --archive FILE… [--json] [--offline | --live]',
  positionals: Number.MAX_SAFE_INTEGER,
  options: {
    json: { type: 'boolean' },
    seal: { type: 'boolean' },
    full: { type: 'boolean' },
    archive: { type: 'boolean' },
    offline: { type: 'boolean' },
    live: { type: 'boolean' },
  },
  modules: modulesOf(audit),
  needsDatabase: ({ options }) => !options.archive || !archivesOffline(options),
  run: async (context) => (await audit()).verifyAudit(context),
};

COMMANDS['audit:archive'] = {
  summary:
    'Archive closed months of the audit trail to AUDIT_ARCHIVE_DIR (one portico-audit-YYYY-MM.jsonl.gz each): --month one month, else every closed month not archived yet',
  synopsis: 'audit:archive [--month YYYY-MM] [--json]',
  positionals: 0,
  options: { month: { type: 'string' }, json: { type: 'boolean' } },
  modules: modulesOf(audit),
  run: async (context) => (await audit()).archiveAudit(context),
};

COMMANDS['webhook:add'] = {
  summary: 'Register a webhook endpoint for a tenant; its signing secret (whsec_…) is printed once',
  synopsis: `webhook:add <tenant slug or id> --url https://… --events ${WEBHOOK_EVENT_TYPE_NAMES.slice(0, 2).join(',')},… [--description "…"]`,
  positionals: 1,
  options: {
    url: { type: 'string' },
    events: { type: 'string' },
    description: { type: 'string' },
  },
  modules: modulesOf(webhooks),
  run: async (context) => (await webhooks()).addWebhook(context),
};

COMMANDS['webhook:list'] = {
  summary: "List a tenant's webhook endpoints (never their secrets)",
  synopsis: 'webhook:list <tenant slug or id>',
  positionals: 1,
  modules: modulesOf(webhooks),
  run: async (context) => (await webhooks()).listWebhooks(context),
};

COMMANDS['webhook:remove'] = {
  summary: 'Remove a webhook endpoint; its pending deliveries are cancelled',
  synopsis: 'webhook:remove <tenant slug or id> <endpoint id>',
  positionals: 2,
  modules: modulesOf(webhooks),
  run: async (context) => (await webhooks()).removeWebhook(context),
};

COMMANDS['webhook:resume'] = {
  summary:
    'Resume a webhook endpoint paused after failing for WEBHOOK_PAUSE_AFTER_MS; what waits for it is sent',
  synopsis: 'webhook:resume <tenant slug or id> <endpoint id>',
  positionals: 2,
  modules: modulesOf(webhooks),
  run: async (context) => (await webhooks()).resumeWebhook(context),
};

COMMANDS['webhook:rotate-secret'] = {
  summary:
    "Rotate a webhook endpoint's secret (printed once); the old one also signs for WEBHOOK_SECRET_GRACE_MS",
  synopsis: 'webhook:rotate-secret <tenant slug or id> <endpoint id>',
  positionals: 2,
  modules: modulesOf(webhooks),
  run: async (context) => (await webhooks()).rotateWebhookSecret(context),
};

COMMANDS['card:credentials:set'] = {
  summary:
    "Set a tenant's merchant keys at the card provider (stored encrypted; shown masked from then on)",
  synopsis:
    'card:credentials:set <tenant slug or id> --secret-key sk_... --public-key pk_... [--pos-key ...]',
  positionals: 1,
  options: {
    'secret-key': { type: 'string' },
    'public-key': { type: 'string' },
    'pos-key': { type: 'string' },
  },
  modules: modulesOf(cardCredentials),
  run: async (context) => (await cardCredentials()).setCardCredentials(context),
};

COMMANDS['card:credentials:show'] = {
  summary: "Show a tenant's card merchant keys, masked",
  synopsis: 'card:credentials:show <tenant slug or id>',
  positionals: 1,
  modules: modulesOf(cardCredentials),
  run: async (context) => (await cardCredentials()).showCardCredentials(context),
};

COMMANDS['secrets:status'] = {
  summary:
    'Count the secrets at rest per key that sealed them (SECRETS_KEY, SECRETS_KEYS); exit 1 when a key no longer configured still holds values',
  synopsis: 'secrets:status',
  positionals: 0,
  modules: modulesOf(secrets),
  run: async (context) => (await secrets()).secretsStatus(context),
};

COMMANDS['secrets:reseal'] = {
  summary:
    'Seal every secret held with a previous key anew with SECRETS_KEY (what the secrets-reseal job does); exit 0 when no value uses another key, so that the others can be retired',
  synopsis: 'secrets:reseal',
  positionals: 0,
  modules: modulesOf(secrets),
  run: async (context) => (await secrets()).resealSecrets(context),
};

COMMANDS['backup'] = {
  summary:
    "Back up the database into a file while the gateway runs: PostgreSQL with pg_dump -Fc (restored with pg_restore), the embedded engine's data directory as a consistent gzipped tar (restored with restore)",
  synopsis: 'backup <file>',
  positionals: 1,
  run: async (context) => (await files()).backup(context),
};

COMMANDS['restore'] = {
  summary:
    'Make a new embedded data directory from a backup of the embedded engine (PostgreSQL: pg_restore, docs/operations.md)',
  synopsis: 'restore <file> <new data directory>',
  positionals: 2,
  run: async (context) => (await files()).restore(context),
};

COMMANDS.reconcile = {
  summary:
    "Reconcile a tenant's records with the provider's for a window of days (UTC, inclusive) and print the run",
  synopsis:
    'reconcile <tenant slug or id> --from YYYY-MM-DD [--to YYYY-MM-DD] [--capability card|customers|notifications|marketplace|open-banking|pos]',
  positionals: 1,
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    capability: { type: 'string' },
  },
  modules: modulesOf(reconciliation),
  // The provider the gateway of this configuration talks to, its sandbox's too (open banking with the
  // QWAC of the same configuration); no other command opens a transport to it.
  configure: withSandboxUpstreams,
  run: async (context) => (await reconciliation()).reconcile(context),
};

COMMANDS['cert:inspect'] = {
  summary:
    'Show what a certificate says: subject, organizationIdentifier, PSD2 roles, authority, validity, fingerprint',
  synopsis: 'cert:inspect <file.pem>',
  positionals: 1,
  run: async (context) => (await files()).inspectCertificate(context),
};

/**
 * An unexpected failure, told without the driver's own words: a database error's message may quote
 * the statement's values, and its SQL text is no business of the person at the terminal.
 */
export function failureInWords(error: unknown): string {
  const cause = (error as { driverError?: unknown }).driverError ?? error;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return `the database refused the command (SQLSTATE ${code}); nothing was changed`;
  if (typeof code === 'string' && ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT'].includes(code))
    return `cannot reach the database (${code}): is DATABASE_URL right, or is the gateway's embedded engine running?`;
  return error instanceof Error ? error.message : String(error);
}

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(
    ([, command]) => `  ${command.synopsis}\n      ${command.summary}`,
  );
  return `usage: npm run cli -- <command>\n\ncommands:\n${lines.join('\n')}\n`;
}

export { UsageError };
