import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import type { ApiKeyRole } from './api-key.entity.js';

/** Who may act on tenants and keys through the API: an operator on every tenant, an admin on its own. */
export interface Actor {
  tenantId: string;
  role: ApiKeyRole;
}

/** The roles of keys an actor may issue or revoke: an admin only its tenant's app and admin keys. */
export function manageableRoles(actor: Actor): readonly ApiKeyRole[] {
  return actor.role === 'operator' ? ['app', 'auditor', 'admin', 'operator'] : ['app', 'admin'];
}

/** Whether the actor may see the tenant at all; another tenant is answered as if it did not exist. */
export function maySeeTenant(actor: Actor, tenantId: string): boolean {
  return actor.role === 'operator' || actor.tenantId === tenantId;
}

export function assertMayManageRole(
  actor: Actor,
  role: ApiKeyRole,
  verb: 'issue' | 'revoke',
): void {
  if (manageableRoles(actor).includes(role)) return;
  throw new ProblemException({
    status: 403,
    type: PROBLEM_TYPES.forbidden,
    title: 'Forbidden',
    detail: `A key with role ${actor.role} may ${verb} only ${manageableRoles(actor).join(' and ')} keys; ${role} keys are the operator's`,
  });
}

export function tenantNotFound(idOrSlug: string): ProblemException {
  return new ProblemException({
    status: 404,
    type: PROBLEM_TYPES.notFound,
    title: 'Not Found',
    detail: `No tenant "${idOrSlug}"`,
  });
}
