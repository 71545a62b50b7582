import type { INestApplicationContext } from '@nestjs/common';
import { API_KEY_ROLES, type ApiKeyRole } from '../access/tenants/api-key.entity.js';
import { CreateTenantRequest } from '../access/tenants/dto/tenant.dto.js';
import { TenantsService } from '../access/tenants/tenants.service.js';
import { validateSync } from 'class-validator';
import { readFileSync } from 'node:fs';
import { readCertificateChain } from '../shared/qwac/qwac-reader.js';
import { plainToInstance } from 'class-transformer';
import type { ParsedArgs } from './main.js';

export interface CommandContext {
  args: ParsedArgs;
  app: INestApplicationContext;
  out: (line: string) => void;
}

interface Command {
  summary: string;
  synopsis: string;
  needsDatabase: boolean;
  run(context: CommandContext): Promise<number>;
}

class UsageError extends Error {}

function required(args: ParsedArgs, index: number, what: string): string {
  const value = args.positional[index];
  if (!value) throw new UsageError(`missing ${what}`);
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
    needsDatabase: true,
    async run(context) {
      const key = await tenantsOf(context).revokeKey(required(context.args, 0, '<key id>'));
      context.out(`revoked key ${key.id} (ptk_${key.prefix}_…)`);
      return 0;
    },
  },
};

COMMANDS['cert:inspect'] = {
  summary:
    'Show what a certificate says: subject, organizationIdentifier, PSD2 roles, authority, validity, fingerprint',
  synopsis: 'cert:inspect <file.pem>',
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

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(
    ([, command]) => `  ${command.synopsis}\n      ${command.summary}`,
  );
  return `usage: npm run cli -- <command>\n\ncommands:\n${lines.join('\n')}\n`;
}

export { UsageError };
