import { TenantsModule } from '../access/tenants/tenants.module.js';
import { CardCredentialsModule } from '../access/merchant-credentials/card-credentials.module.js';
import { SetCardCredentialsRequest } from '../access/merchant-credentials/card-credentials.dto.js';
import { CardCredentialsService } from '../access/merchant-credentials/card-credentials.service.js';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { required, UsageError, type CommandContext } from './commands.js';
import { tenantsOf } from './tenant-commands.js';

/** A tenant's merchant keys at the card provider. */
export const MODULES = [TenantsModule, CardCredentialsModule];

export async function setCardCredentials(context: CommandContext): Promise<number> {
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
}

export async function showCardCredentials(context: CommandContext): Promise<number> {
  const tenant = await tenantsOf(context).findTenant(required(context.args, 0, '<tenant>'));
  const view = await context.app.get(CardCredentialsService).view(tenant.id);
  if (!view) throw new UsageError(`tenant ${tenant.slug} has no card merchant keys`);
  context.out(
    `secret ${view.secretKey}, public ${view.publicKey ?? '-'}, pos ${view.posKey ?? '-'} (${view.source}, ${view.updatedAt.toISOString()})`,
  );
  return 0;
}
