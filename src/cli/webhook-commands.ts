import { StatusTransitionsModule } from '../audit/trail/status-transition-listeners.js';
import { TenantsModule } from '../access/tenants/tenants.module.js';
import { CreateWebhookEndpointRequest } from '../webhooks/dto/webhook.dto.js';
import { WEBHOOK_EVENT_TYPE_NAMES } from '../webhooks/webhook-event-types.js';
import { WebhooksCoreModule } from '../webhooks/webhooks.module.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { endpointStatus } from '../webhooks/webhook.entities.js';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { required, requiredId, table, UsageError, type CommandContext } from './commands.js';
import { tenantsOf } from './tenant-commands.js';

/** A tenant's webhook endpoints (without the delivery worker). */
export const MODULES = [TenantsModule, StatusTransitionsModule, WebhooksCoreModule];

const webhooksOf = (context: CommandContext) => context.app.get(WebhooksService);
const tenantIdOf = async (context: CommandContext) =>
  (await tenantsOf(context).findTenant(required(context.args, 0, '<tenant>'))).id;

export async function addWebhook(context: CommandContext): Promise<number> {
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
}

export async function listWebhooks(context: CommandContext): Promise<number> {
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
}

export async function removeWebhook(context: CommandContext): Promise<number> {
  const endpointId = requiredId(context.args, 1, '<endpoint id>');
  await webhooksOf(context).removeEndpoint(await tenantIdOf(context), endpointId);
  context.out(`removed webhook endpoint ${endpointId}`);
  return 0;
}

export async function resumeWebhook(context: CommandContext): Promise<number> {
  const endpointId = requiredId(context.args, 1, '<endpoint id>');
  const endpoint = await webhooksOf(context).resumeEndpoint(await tenantIdOf(context), endpointId);
  context.out(`resumed webhook endpoint ${endpoint.id} -> ${endpoint.url}`);
  return 0;
}

export async function rotateWebhookSecret(context: CommandContext): Promise<number> {
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
}
