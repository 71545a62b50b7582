import { TenantsModule } from '../access/tenants/tenants.module.js';
import { StatusTransitionsModule } from '../audit/trail/status-transition-listeners.js';
import { CardCredentialsModule } from '../access/merchant-credentials/card-credentials.module.js';
import { SecretsModule } from '../platform/secrets/secrets.module.js';
import { SecretsResealService, type KeyCount } from '../platform/secrets/secrets-reseal.service.js';
import { WebhooksCoreModule } from '../webhooks/webhooks.module.js';
import { table, UsageError, type CommandContext } from './commands.js';

/** The secrets at rest: every module that seals some registers them with the reseal service. */
export const MODULES = [
  TenantsModule,
  SecretsModule,
  StatusTransitionsModule,
  WebhooksCoreModule,
  CardCredentialsModule,
];

const printKeyCounts = (context: CommandContext, counts: KeyCount[]) =>
  table(
    counts.map(({ keyId, key, values }) => ({
      'key id': keyId || '-',
      key,
      values: String(values),
    })),
  ).forEach((line) => context.out(line));

export async function secretsStatus(context: CommandContext): Promise<number> {
  const counts = await context.app.get(SecretsResealService).count();
  printKeyCounts(context, counts);
  return counts.some((count) => count.key === 'unconfigured') ? 1 : 0;
}

export async function resealSecrets(context: CommandContext): Promise<number> {
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
}
