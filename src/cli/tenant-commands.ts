import { TenantsModule } from '../access/tenants/tenants.module.js';
import { API_KEY_ROLES, type ApiKeyRole } from '../access/tenants/api-key-roles.js';
import { CreateTenantRequest } from '../access/tenants/dto/tenant.dto.js';
import { TenantsService } from '../access/tenants/tenants.service.js';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { required, requiredId, table, UsageError, type CommandContext } from './commands.js';

/** Tenants and their API keys. */
export const MODULES = [TenantsModule];

export const tenantsOf = (context: CommandContext) => context.app.get(TenantsService);

export async function createTenant(context: CommandContext): Promise<number> {
  const slug = required(context.args, 0, '<slug>');
  const name = typeof context.args.options.name === 'string' ? context.args.options.name : slug;
  const errors = validateSync(plainToInstance(CreateTenantRequest, { slug, name }));
  if (errors.length)
    throw new UsageError(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; '));
  const tenant = await tenantsOf(context).createTenant(slug, name);
  context.out(`created tenant ${tenant.slug} (${tenant.id})`);
  return 0;
}

export async function listTenants(context: CommandContext): Promise<number> {
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
}

export async function issueKey(context: CommandContext): Promise<number> {
  const tenant = required(context.args, 0, '<tenant>');
  const role = context.args.options.role;
  if (typeof role !== 'string' || !API_KEY_ROLES.includes(role as ApiKeyRole))
    throw new UsageError(`--role must be one of ${API_KEY_ROLES.join(', ')}`);
  const label = typeof context.args.options.label === 'string' ? context.args.options.label : '';
  const { apiKey, key } = await tenantsOf(context).issueKey(tenant, role as ApiKeyRole, label);
  context.out(`issued ${apiKey.role} key ${apiKey.id} for tenant ${tenant}`);
  context.out(`API key (shown once, store it now): ${key}`);
  return 0;
}

export async function listKeys(context: CommandContext): Promise<number> {
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
}

export async function revokeKey(context: CommandContext): Promise<number> {
  const key = await tenantsOf(context).revokeKey(requiredId(context.args, 0, '<key id>'));
  context.out(`revoked key ${key.id} (ptk_${key.prefix}_…)`);
  return 0;
}
