import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TenantsService } from './tenants.service.js';

export const DEMO_TENANT_SLUG = 'demo';
const DEMO_KEY_LABEL = 'demo key (printed by npm start)';
/** The installation's own tenant: it holds the operator keys (docs/conventions.md's CLI example uses it too). */
export const OPERATIONS_TENANT_SLUG = 'operations';
const OPERATOR_KEY_LABEL = 'operator key (printed by npm start)';
const AUDITOR_KEY_LABEL = 'auditor key (printed by npm start)';

export interface SandboxKeys {
  /** An `app` key of the demo tenant, for the facade. */
  demo: string;
  /** An `operator` key of the operations tenant: tenants, keys, readiness details. */
  operator: string;
  /** An `auditor` key of the operations tenant: every tenant's trail, the auditor's page. */
  auditor: string;
}

export interface GivenSandboxKeys extends SandboxKeys {
  /** The file the keys are kept in for the next start; undefined when they are not kept. */
  keptIn?: string;
}

/**
 * Where sandbox mode keeps the keys it printed, so that the next start prints the same ones: beside the
 * embedded engine's data directory (`./data/sandbox-keys.json` by default). None with `memory://`,
 * where nothing outlives the process.
 */
export function sandboxKeysFile(embeddedDir: string): string | undefined {
  return embeddedDir === 'memory://' ? undefined : join(dirname(embeddedDir), 'sandbox-keys.json');
}

/**
 * Sandbox mode only: makes sure the demo and operations tenants exist and gives a demo `app` key, an
 * `operator` key and an `auditor` key. The keys kept in `file` are given again while they still work (same tenant, same
 * role, not revoked); otherwise fresh ones are issued (the previous ones with that label revoked) and
 * kept there, readable by this user only. Keys are stored in the database as hashes: the file is the
 * only place they can be read again.
 */
export async function issueSandboxKeys(
  tenants: TenantsService,
  file?: string,
): Promise<GivenSandboxKeys> {
  const kept = file ? readKept(file) : undefined;
  const keys = {
    demo: await keepOrReissue(tenants, kept?.demo, {
      slug: DEMO_TENANT_SLUG,
      name: 'Demo fintech app',
      role: 'app',
      label: DEMO_KEY_LABEL,
    }),
    operator: await keepOrReissue(tenants, kept?.operator, {
      slug: OPERATIONS_TENANT_SLUG,
      name: 'Installation operators',
      role: 'operator',
      label: OPERATOR_KEY_LABEL,
    }),
    auditor: await keepOrReissue(tenants, kept?.auditor, {
      slug: OPERATIONS_TENANT_SLUG,
      name: 'Installation operators',
      role: 'auditor',
      label: AUDITOR_KEY_LABEL,
    }),
  };
  const unchanged =
    keys.demo === kept?.demo && keys.operator === kept.operator && keys.auditor === kept.auditor;
  const keptIn = file && (unchanged || writeKept(file, keys)) ? file : undefined;
  return { ...keys, keptIn };
}

async function keepOrReissue(
  tenants: TenantsService,
  kept: string | undefined,
  wanted: { slug: string; name: string; role: 'app' | 'operator' | 'auditor'; label: string },
): Promise<string> {
  const tenant = await tenants.ensureTenant(wanted.slug, wanted.name);
  const principal = kept ? await tenants.authenticate(kept) : undefined;
  if (kept && principal?.tenantId === tenant.id && principal.role === wanted.role) return kept;
  await tenants.revokeKeysByLabel(tenant.id, wanted.label);
  return (await tenants.issueKey(tenant.id, wanted.role, wanted.label)).key;
}

function readKept(file: string): Partial<SandboxKeys> | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const entries = Object.entries(parsed as Record<string, unknown>).filter(
      ([name, value]) =>
        ['demo', 'operator', 'auditor'].includes(name) && typeof value === 'string',
    );
    return Object.fromEntries(entries) as Partial<SandboxKeys>;
  } catch {
    return undefined; // none yet, or unreadable: fresh keys replace it
  }
}

/** Written whole (a rename), mode 0600 from the start: never half a file, never readable by others. */
function writeKept(file: string, keys: SandboxKeys): boolean {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
    chmodSync(partial, 0o600);
    renameSync(partial, file);
    return true;
  } catch {
    return false; // a read-only place: the keys still work, only not kept for the next start
  }
}
