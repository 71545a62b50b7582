import type { EntityManager } from 'typeorm';
import type { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/** An endpoint with deliveries due, in the order it should be served. */
export interface ClaimCandidate {
  endpointId: string;
  tenantId: string;
  /** Its last attempt failed: it gets one attempt at a time (a probe). */
  failing: boolean;
  /** Its attempts in flight now, on every replica. */
  busy: number;
}

export interface ClaimedDelivery {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  tenantId: string;
  attempt: number;
}

/**
 * How many attempts each endpoint gets of `room`: one at a time round the candidates (so every endpoint
 * due gets its turn before any gets a second), none beyond the endpoint's own bound, and none beyond what
 * the tenant has left of its share (`tenantRoom`).
 */
export function shareRoom(
  candidates: readonly ClaimCandidate[],
  room: number,
  tenantRoom: (tenantId: string) => number,
  endpointConcurrency: number,
): Map<string, number> {
  const given = new Map<string, number>();
  const tenantLeft = new Map<string, number>();
  for (const candidate of candidates)
    tenantLeft.set(candidate.tenantId, Math.max(0, tenantRoom(candidate.tenantId)));
  let left = room;
  for (let progress = true; left > 0 && progress;) {
    progress = false;
    for (const candidate of candidates) {
      if (left === 0) break;
      const cap = (candidate.failing ? 1 : endpointConcurrency) - candidate.busy;
      const mine = given.get(candidate.endpointId) ?? 0;
      if (mine >= cap || tenantLeft.get(candidate.tenantId)! === 0) continue;
      given.set(candidate.endpointId, mine + 1);
      tenantLeft.set(candidate.tenantId, tenantLeft.get(candidate.tenantId)! - 1);
      left--;
      progress = true;
    }
  }
  return given;
}

/**
 * Leases due deliveries fairly: of the endpoints due (WebhookDeliveriesRepository.dueEndpoints), per
 * endpoint at most what `shareRoom` gave it, and never more in flight than its bound.
 */
export async function claimFairly(
  deliveries: WebhookDeliveriesRepository,
  manager: EntityManager,
  options: {
    room: number;
    tenantRoom: (tenantId: string) => number;
    endpointConcurrency: number;
    maxAttempts: number;
    leaseMs: number;
    leaseToken: string;
  },
): Promise<ClaimedDelivery[]> {
  const { room, endpointConcurrency, maxAttempts, leaseMs, leaseToken } = options;
  const due = await deliveries.dueEndpoints(manager, maxAttempts, Math.min(4 * room, 256));
  const shares = shareRoom(due, room, options.tenantRoom, endpointConcurrency);
  if (shares.size === 0) return [];
  const chosen = due.filter((candidate) => shares.has(candidate.endpointId));
  return deliveries.lease(
    manager,
    {
      endpointIds: chosen.map((candidate) => candidate.endpointId),
      shares: chosen.map((candidate) => shares.get(candidate.endpointId)!),
      caps: chosen.map((candidate) => (candidate.failing ? 1 : endpointConcurrency)),
    },
    { maxAttempts, leaseMs, leaseToken },
  );
}
