import type { TenantsService } from './tenants.service.js';

export const DEMO_TENANT_SLUG = 'demo';
const DEMO_KEY_LABEL = 'demo key (printed by npm start)';

/**
 * Sandbox mode only: makes sure the demo tenant exists and issues a fresh `app` key for it.
 * Keys are stored as hashes, so the one printed at the previous start cannot be shown again; it is revoked.
 */
export async function issueDemoKey(tenants: TenantsService): Promise<string> {
  const tenant = await tenants.ensureTenant(DEMO_TENANT_SLUG, 'Demo fintech app');
  await tenants.revokeKeysByLabel(tenant.id, DEMO_KEY_LABEL);
  return (await tenants.issueKey(tenant.id, 'app', DEMO_KEY_LABEL)).key;
}
