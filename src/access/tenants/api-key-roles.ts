/**
 * `app` uses the facade; `auditor` reads every tenant's audit trail; `admin` manages its own tenant's keys;
 * `operator` runs the installation (tenants, any tenant's keys, auditor and operator keys, readiness details).
 * Apart from the entity, so that the CLI names them in its usage without loading the ORM.
 */
export const API_KEY_ROLES = ['app', 'auditor', 'admin', 'operator'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];
