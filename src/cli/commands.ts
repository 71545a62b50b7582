import type { INestApplicationContext } from '@nestjs/common';
import { API_KEY_ROLES, type ApiKeyRole } from '../access/tenants/api-key.entity.js';
import { CreateTenantRequest } from '../access/tenants/dto/tenant.dto.js';
import { TenantsService } from '../access/tenants/tenants.service.js';
import { AuditChainService } from '../audit/trail/audit-chain.service.js';
import { AuditVerifierService } from '../audit/trail/audit-verifier.service.js';
import { CreateWebhookEndpointRequest } from '../webhooks/dto/webhook.dto.js';
import { WEBHOOK_EVENT_TYPE_NAMES } from '../webhooks/webhook-event-types.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { endpointStatus } from '../webhooks/webhook.entities.js';
import { validateSync } from 'class-validator';
import { SetCardCredentialsRequest } from '../access/merchant-credentials/card-credentials.dto.js';
import { CardCredentialsService } from '../access/merchant-credentials/card-credentials.service.js';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../platform/config/app-config.js';
import { backupEmbedded, backupPostgres, restoreEmbedded } from '../platform/database/backup.js';
import { readCertificateChain } from '../shared/qwac/qwac-reader.js';
import { plainToInstance } from 'class-transformer';
import { SecretsResealService, type KeyCount } from '../platform/secrets/secrets-reseal.service.js';
import { isUuid } from '../shared/uuid.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CreateReconciliationRunRequest } from '../reconciliation/reconciliation.dto.js';
import { ReconciliationRuns } from '../reconciliation/reconciliation-runs.service.js';

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
  needsDatabase: boolean;
  run(context: CommandContext): Promise<number>;
}

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

function required(args: ParsedArgs, index: number, what: string): string {
  const value = args.positional[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** A positional argument that must be an id (a UUID), checked before it reaches a uuid column. */
function requiredId(args: ParsedArgs, index: number, what: string): string {
  const value = required(args, index, what);
  if (!isUuid(value))
    throw new UsageError(`${what} must be an id as the list shows it (a UUID), not "${value}"`);
  return value;
}

function table(rows: Record<string, string>[]): string[] {
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

const tenantsOf = (context: CommandContext) => context.app.get(TenantsService);

export const COMMANDS: Record<string, Command> = {
  'tenant:create': {
    summary: 'Create a tenant (one fintech app)',
    synopsis: 'tenant:create <slug> [--name "Display name"]',
    positionals: 1,
    options: { name: { type: 'string' } },
    needsDatabase: true,
    async run(context) {
      const slug = required(context.args, 0, '<slug>');
      const name = typeof context.args.options.name === 'string' ? context.args.options.name : slug;
      const errors = validateSync(plainToInstance(CreateTenantRequest, { slug, name }));
      if (errors.length)
        throw new UsageError(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; '));
      const tenant = await tenantsOf(context).createTenant(slug, name);
      context.out(`created tenant ${tenant.slug} (${tenant.id})`);
      return 0;
    },
  },
  'tenant:list': {
    summary: 'List tenants',
    synopsis: 'tenant:list',
    positionals: 0,
    needsDatabase: true,
    async run(context) {
      const tenants = await tenantsOf(context).listTenants();
      table(
        tenants.map((t) => ({
          id: t.id,
          slug: t.slug,
          name: t.name,
          created: t.createdAt.toISOString(),
        })),
      ).forEach(context.out);
      return 0;
    },
  },
  'key:issue': {
    summary: 'Issue an API key for a tenant; the key is printed once and stored only as a hash',
    synopsis: `key:issue <tenant slug or id> --role ${API_KEY_ROLES.join('|')} [--label "what it is for"]`,
    positionals: 1,
    options: { role: { type: 'string' }, label: { type: 'string' } },
    needsDatabase: true,
    async run(context) {
      const tenant = required(context.args, 0, '<tenant>');
      const role = context.args.options.role;
      if (typeof role !== 'string' || !API_KEY_ROLES.includes(role as ApiKeyRole))
        throw new UsageError(`--role must be one of ${API_KEY_ROLES.join(', ')}`);
      const label =
        typeof context.args.options.label === 'string' ? context.args.options.label : '';
      const { apiKey, key } = await tenantsOf(context).issueKey(tenant, role as ApiKeyRole, label);
      context.out(`issued ${apiKey.role} key ${apiKey.id} for tenant ${tenant}`);
      context.out(`API key (shown once, store it now): ${key}`);
      return 0;
    },
  },
  'key:list': {
    summary: "List a tenant's API keys (never the keys themselves)",
    synopsis: 'key:list <tenant slug or id>',
    positionals: 1,
    needsDatabase: true,
    async run(context) {
      const keys = await tenantsOf(context).listKeys(required(context.args, 0, '<tenant>'));
      table(
        keys.map((k) => ({
          id: k.id,
          prefix: `ptk_${k.prefix}_…`,
          role: k.role,
          label: k.label,
          created: k.createdAt.toISOString(),
          'last used': k.lastUsedAt?.toISOString() ?? '-',
          revoked: k.revokedAt?.toISOString() ?? '-',
        })),
      ).forEach(context.out);
      return 0;
    },
  },
  'key:revoke': {
    summary: 'Revoke an API key; it stops working on the next request, on every replica',
    synopsis: 'key:revoke <key id>',
    positionals: 1,
    needsDatabase: true,
    async run(context) {
      const key = await tenantsOf(context).revokeKey(requiredId(context.args, 0, '<key id>'));
      context.out(`revoked key ${key.id} (ptk_${key.prefix}_…)`);
      return 0;
    },
  },
};

COMMANDS['audit:verify'] = {
  summary:
    'Verify the tamper-evident audit chain (links, rows, signed checkpoints) from the newest checkpoint verified before (--full: from its start); exit 1 at the first break',
  synopsis: 'audit:verify [--json] [--seal] [--full]',
  positionals: 0,
  options: { json: { type: 'boolean' }, seal: { type: 'boolean' }, full: { type: 'boolean' } },
  needsDatabase: true,
  async run(context) {
    // --seal: first seal what is due, so that rows written a moment ago are verified too.
    if (context.args.options.seal) await context.app.get(AuditChainService).seal();
    const report = await context.app
      .get(AuditVerifierService)
      .verify({ from: context.args.options.full ? 'start' : 'last-verified', trigger: 'cli' });
    if (context.args.options.json) {
      context.out(JSON.stringify(report, null, 2));
      return report.ok ? 0 : 1;
    }
    const latest = report.checkpoints.latest;
    context.out(
      `walked from:    ${report.from ? `checkpoint ${report.from.seq} (verified before)` : "the chain's start"}`,
    );
    context.out(`links verified: ${report.links}`);
    context.out(
      `head:           ${report.head ? `${report.head.seq} ${report.head.chainHash}` : '(empty chain)'}`,
    );
    context.out(
      `checkpoints:    ${report.checkpoints.count}${latest ? `, latest ${latest.seq} signed ${latest.signedAt} by key ${latest.keyId}` : ''}`,
    );
    if (report.firstBreak) {
      const at = report.firstBreak;
      context.out(
        `BROKEN at ${at.seq ? `link ${at.seq}` : 'a row outside the chain'}${at.entryKind ? ` (${at.entryKind} ${at.entryId})` : ''}: ${at.problem}: ${at.detail}`,
      );
      return 1;
    }
    context.out('the chain verifies');
    return 0;
  },
};

const webhooksOf = (context: CommandContext) => context.app.get(WebhooksService);
const tenantIdOf = async (context: CommandContext) =>
  (await tenantsOf(context).findTenant(required(context.args, 0, '<tenant>'))).id;

COMMANDS['webhook:add'] = {
  summary: 'Register a webhook endpoint for a tenant; its signing secret (whsec_…) is printed once',
  synopsis: `webhook:add <tenant slug or id> --url https://… --events ${WEBHOOK_EVENT_TYPE_NAMES.slice(0, 2).join(',')},… [--description "…"]`,
  positionals: 1,
  options: {
    url: { type: 'string' },
    events: { type: 'string' },
    description: { type: 'string' },
  },
  needsDatabase: true,
  async run(context) {
    const tenantId = await tenantIdOf(context);
    const { url, events, description } = context.args.options;
    const request = plainToInstance(CreateWebhookEndpointRequest, {
      url,
      eventTypes: typeof events === 'string' ? events.split(',').map((e) => e.trim()) : undefined,
      ...(typeof description === 'string' ? { description } : {}),
    });
    const errors = validateSync(request);
    if (errors.length)
      throw new UsageError(
        `${errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; ')} (event types: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')})`,
      );
    const endpoint = await webhooksOf(context).createEndpoint(tenantId, request);
    context.out(`registered webhook endpoint ${endpoint.id} -> ${endpoint.url}`);
    context.out(`events: ${endpoint.eventTypes.join(', ')}`);
    context.out(`signing secret (shown once, store it now): ${endpoint.secret}`);
    return 0;
  },
};

COMMANDS['webhook:list'] = {
  summary: "List a tenant's webhook endpoints (never their secrets)",
  synopsis: 'webhook:list <tenant slug or id>',
  positionals: 1,
  needsDatabase: true,
  async run(context) {
    const endpoints = await webhooksOf(context).listEndpoints(await tenantIdOf(context));
    table(
      endpoints.map((e) => ({
        id: e.id,
        url: e.url,
        events: e.eventTypes.join(','),
        created: e.createdAt.toISOString(),
        status: endpointStatus(e),
        'previous secret until':
          e.previousSecretExpiresAt && e.previousSecretExpiresAt > new Date()
            ? e.previousSecretExpiresAt.toISOString()
            : '-',
      })),
    ).forEach(context.out);
    return 0;
  },
};

COMMANDS['webhook:remove'] = {
  summary: 'Remove a webhook endpoint; its pending deliveries are cancelled',
  synopsis: 'webhook:remove <tenant slug or id> <endpoint id>',
  positionals: 2,
  needsDatabase: true,
  async run(context) {
    const endpointId = requiredId(context.args, 1, '<endpoint id>');
    await webhooksOf(context).removeEndpoint(await tenantIdOf(context), endpointId);
    context.out(`removed webhook endpoint ${endpointId}`);
    return 0;
  },
};

COMMANDS['webhook:resume'] = {
  summary:
    'Resume a webhook endpoint paused after failing for WEBHOOK_PAUSE_AFTER_MS; what waits for it is sent',
  synopsis: 'webhook:resume <tenant slug or id> <endpoint id>',
  positionals: 2,
  needsDatabase: true,
  async run(context) {
    const endpointId = requiredId(context.args, 1, '<endpoint id>');
    const endpoint = await webhooksOf(context).resumeEndpoint(
      await tenantIdOf(context),
      endpointId,
    );
    context.out(`resumed webhook endpoint ${endpoint.id} -> ${endpoint.url}`);
    return 0;
  },
};

COMMANDS['webhook:rotate-secret'] = {
  summary:
    "Rotate a webhook endpoint's secret (printed once); the old one also signs for WEBHOOK_SECRET_GRACE_MS",
  synopsis: 'webhook:rotate-secret <tenant slug or id> <endpoint id>',
  positionals: 2,
  needsDatabase: true,
  async run(context) {
    const endpointId = requiredId(context.args, 1, '<endpoint id>');
    const endpoint = await webhooksOf(context).rotateSecret(await tenantIdOf(context), endpointId);
    context.out(`rotated the secret of webhook endpoint ${endpoint.id}`);
    context.out(`signing secret (shown once, store it now): ${endpoint.secret}`);
    context.out(
      endpoint.previousSecretExpiresAt
        ? `the previous secret also signs until ${endpoint.previousSecretExpiresAt.toISOString()}`
        : 'the previous secret no longer signs',
    );
    return 0;
  },
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
  needsDatabase: true,
  async run(context) {
    const tenant = required(context.args, 0, '<tenant>');
    const { options } = context.args;
    const request = plainToInstance(SetCardCredentialsRequest, {
      secretKey: options['secret-key'],
      publicKey: options['public-key'],
      posKey: options['pos-key'],
    });
    const errors = validateSync(request);
    if (errors.length)
      throw new UsageError(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; '));
    const view = await context.app.get(CardCredentialsService).set(tenant, {
      secretKey: request.secretKey,
      publicKey: request.publicKey,
      posKey: request.posKey,
    });
    context.out(
      `card merchant keys of ${tenant} set: secret ${view.secretKey}, public ${view.publicKey}${view.posKey ? `, pos ${view.posKey}` : ''}`,
    );
    return 0;
  },
};

COMMANDS['card:credentials:show'] = {
  summary: "Show a tenant's card merchant keys, masked",
  synopsis: 'card:credentials:show <tenant slug or id>',
  positionals: 1,
  needsDatabase: true,
  async run(context) {
    const tenant = await tenantsOf(context).findTenant(required(context.args, 0, '<tenant>'));
    const view = await context.app.get(CardCredentialsService).view(tenant.id);
    if (!view) throw new UsageError(`tenant ${tenant.slug} has no card merchant keys`);
    context.out(
      `secret ${view.secretKey}, public ${view.publicKey ?? '-'}, pos ${view.posKey ?? '-'} (${view.source}, ${view.updatedAt.toISOString()})`,
    );
    return 0;
  },
};

const printKeyCounts = (context: CommandContext, counts: KeyCount[]) =>
  table(
    counts.map(({ keyId, key, values }) => ({
      'key id': keyId || '-',
      key,
      values: String(values),
    })),
  ).forEach((line) => context.out(line));

COMMANDS['secrets:status'] = {
  summary:
    'Count the secrets at rest per key that sealed them (SECRETS_KEY, SECRETS_KEYS); exit 1 when a key no longer configured still holds values',
  synopsis: 'secrets:status',
  positionals: 0,
  needsDatabase: true,
  async run(context) {
    const counts = await context.app.get(SecretsResealService).count();
    printKeyCounts(context, counts);
    return counts.some((count) => count.key === 'unconfigured') ? 1 : 0;
  },
};

COMMANDS['secrets:reseal'] = {
  summary:
    'Seal every secret held with a previous key anew with SECRETS_KEY (what the secrets-reseal job does); exit 0 when no value uses another key, so that the others can be retired',
  synopsis: 'secrets:reseal',
  positionals: 0,
  needsDatabase: true,
  async run(context) {
    const report = await context.app.get(SecretsResealService).run();
    if (!report) throw new UsageError('SECRETS_KEY is not set: nothing can be sealed');
    context.out(`sealed anew: ${report.resealed}`);
    printKeyCounts(context, report.counts);
    const others = report.counts.filter((count) => count.key !== 'current');
    if (others.length > 0) {
      context.out(
        `values still use other keys (${others.map((c) => c.keyId || 'unsealed').join(', ')}): do not retire them`,
      );
      return 1;
    }
    context.out('every sealed value uses SECRETS_KEY: the keys of SECRETS_KEYS can be retired');
    return 0;
  },
};

COMMANDS['backup'] = {
  summary:
    "Back up the database into a file while the gateway runs: PostgreSQL with pg_dump -Fc (restored with pg_restore), the embedded engine's data directory as a consistent gzipped tar (restored with restore)",
  synopsis: 'backup <file>',
  positionals: 1,
  needsDatabase: false,
  async run(context) {
    const file = required(context.args, 0, '<file>');
    const { database } = loadConfig();
    const bytes = database.url
      ? await backupPostgres(database.url, file)
      : await backupEmbedded(database.embeddedDir, file);
    context.out(
      `backed up ${database.url ? 'PostgreSQL (pg_dump custom format)' : `the embedded engine's ${database.embeddedDir}`} into ${file} (${bytes} bytes)`,
    );
    return 0;
  },
};

COMMANDS['restore'] = {
  summary:
    'Make a new embedded data directory from a backup of the embedded engine (PostgreSQL: pg_restore, docs/operations.md)',
  synopsis: 'restore <file> <new data directory>',
  positionals: 2,
  needsDatabase: false,
  async run(context) {
    const file = required(context.args, 0, '<file>');
    const directory = required(context.args, 1, '<new data directory>');
    await restoreEmbedded(file, directory);
    context.out(`restored ${file} into ${directory}: start with EMBEDDED_DB_DIR=${directory}`);
    return 0;
  },
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
  needsDatabase: true,
  async run(context) {
    const tenant = await tenantsOf(context).findTenant(required(context.args, 0, '<tenant>'));
    const { from, to, capability } = context.args.options;
    const request = plainToInstance(CreateReconciliationRunRequest, {
      tenantId: tenant.id,
      from,
      to: to ?? from,
      ...(capability === undefined ? {} : { capability }),
    });
    const errors = validateSync(request);
    if (errors.length)
      throw new UsageError(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; '));
    const run = await context.app.get(ReconciliationRuns).onDemand(request);
    context.out(
      `run ${run.id} of ${tenant.slug} ${run.from} to ${run.to}: ${run.status}, ${run.requests} provider calls, ${run.durationMs ?? 0} ms`,
    );
    for (const [name, count] of Object.entries(run.counts ?? {}))
      context.out(`  ${name.padEnd(15)} ${count}`);
    return run.status === 'succeeded' ? 0 : 1;
  },
};

COMMANDS['cert:inspect'] = {
  summary:
    'Show what a certificate says: subject, organizationIdentifier, PSD2 roles, authority, validity, fingerprint',
  synopsis: 'cert:inspect <file.pem>',
  positionals: 1,
  needsDatabase: false,
  async run(context) {
    const file = required(context.args, 0, '<file.pem>');
    const chain = readCertificateChain(readFileSync(file));
    chain.forEach((info, index) => {
      if (index > 0) context.out('');
      context.out(`${index === 0 ? 'certificate' : `chain[${index}]`}: ${file}`);
      const rows: [string, string][] = [
        ['subject', info.subject],
        ['issuer', info.issuer],
        ['organizationIdentifier', info.organizationIdentifier ?? '(none)'],
        ['PSD2 roles', info.roles.length ? info.roles.join(', ') : '(none)'],
        [
          'competent authority',
          info.competentAuthority
            ? `${info.competentAuthority.name} (${info.competentAuthority.id})`
            : '(none)',
        ],
        [
          'QC statements',
          [info.qcCompliance ? 'QcCompliance' : '', ...info.qcTypes.map((t) => `QcType ${t}`)]
            .filter(Boolean)
            .join(', ') || '(none)',
        ],
        ['valid from', info.validFrom.toISOString()],
        [
          'valid to',
          `${info.validTo.toISOString()} (${info.daysToExpiry >= 0 ? `${info.daysToExpiry} days left` : `expired ${-info.daysToExpiry} days ago`})`,
        ],
        ['serial', info.serialNumber],
        ['SHA-256', info.fingerprintSha256],
      ];
      const width = Math.max(...rows.map(([label]) => label.length));
      for (const [label, value] of rows) context.out(`  ${label.padEnd(width)}  ${value}`);
    });
    return 0;
  },
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
