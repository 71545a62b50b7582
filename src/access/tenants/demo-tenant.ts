import type { TenantsService } from './tenants.service.js';

export const DEMO_TENANT_SLUG = 'demo';
const DEMO_KEY_LABEL = 'demo key (printed by npm start)';
/** The installation's own tenant: it holds the operator keys (the CLI's README example uses it too). */
export const OPERATIONS_TENANT_SLUG = 'operations';
const OPERATOR_KEY_LABEL = 'operator key (printed by npm start)';

export interface SandboxKeys {
  /** An `app` key of the demo tenant, for the facade. */
  demo: string;
  /** An `operator` key of the operations tenant: tenants, keys, readiness details. */
  operator: string;
}

/**
 * Sandbox mode only: makes sure the demo and operations tenants exist and issues a fresh demo `app` key and
 * a fresh `operator` key. Keys are stored as hashes, so the ones printed at the previous start cannot be
 * shown again; they are revoked.
 */
export async function issueSandboxKeys(tenants: TenantsService): Promise<SandboxKeys> {
  return {
    demo: await reissue(tenants, DEMO_TENANT_SLUG, 'Demo fintech app', 'app', DEMO_KEY_LABEL),
    operator: await reissue(
      tenants,
      OPERATIONS_TENANT_SLUG,
      'Installation operators',
      'operator',
      OPERATOR_KEY_LABEL,
    ),
  };
}

async function reissue(
  tenants: TenantsService,
  slug: string,
  name: string,
  role: 'app' | 'operator',
  label: string,
): Promise<string> {
  const tenant = await tenants.ensureTenant(slug, name);
  await tenants.revokeKeysByLabel(tenant.id, label);
  return (await tenants.issueKey(tenant.id, role, label)).key;
}
