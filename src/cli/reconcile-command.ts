import { TenantsModule } from '../access/tenants/tenants.module.js';
import { CardCredentialsModule } from '../access/merchant-credentials/card-credentials.module.js';
import { AuditTrailModule } from '../audit/trail/audit-trail.module.js';
import { WebhooksCoreModule } from '../webhooks/webhooks.module.js';
import { InDoubtModule } from '../platform/in-doubt/in-doubt-settlers.js';
import { ProviderSyncModule } from '../platform/provider-sync/provider-sync.js';
import { TracingModule } from '../platform/tracing/tracing.module.js';
import { ID_ONLY_TRACER } from '../platform/tracing/tracer.js';
import { ReconciliationModule } from '../reconciliation/reconciliation.module.js';
import { CreateReconciliationRunRequest } from '../reconciliation/reconciliation.dto.js';
import { ReconciliationRuns } from '../reconciliation/reconciliation-runs.service.js';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { required, UsageError, type CommandContext } from './commands.js';
import { tenantsOf } from './tenant-commands.js';

/** The card side and its ledger, whose registrations the idle scheduler never runs. */
export const MODULES = [
  TenantsModule,
  AuditTrailModule,
  WebhooksCoreModule,
  CardCredentialsModule,
  TracingModule.forRoot(ID_ONLY_TRACER),
  InDoubtModule,
  ProviderSyncModule,
  ReconciliationModule,
];

export async function reconcile(context: CommandContext): Promise<number> {
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
  if (run.error) context.out(`  error: ${run.error}`);
  return run.status === 'succeeded' ? 0 : 1;
}
