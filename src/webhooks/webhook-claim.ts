import type { EntityManager } from 'typeorm';

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
 * The endpoints with a delivery due, locked for this claim (another replica skips them), least recently
 * served first, tenants taking turns: each tenant's least recently served endpoint, then each one's
 * second, and so on. Paused endpoints and those backing off are not due.
 */
async function candidates(
  manager: EntityManager,
  maxAttempts: number,
  limit: number,
): Promise<ClaimCandidate[]> {
  const rows = (await manager.query(
    `WITH due AS (
       SELECT e.id, e.last_claimed_at,
              row_number() OVER (PARTITION BY e.tenant_id ORDER BY e.last_claimed_at NULLS FIRST, e.id) AS turn
         FROM webhook_endpoints e
        WHERE e.removed_at IS NULL AND e.paused_at IS NULL
          AND (e.retry_at IS NULL OR e.retry_at <= now())
          AND EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now()
                         AND d.attempts < $1 AND (d.lease_until IS NULL OR d.lease_until < now())))
     SELECT e.id, e.tenant_id, e.failing_since IS NOT NULL AS failing,
            (SELECT count(*) FROM webhook_deliveries b
              WHERE b.endpoint_id = e.id AND b.lease_token IS NOT NULL AND b.lease_until >= now())::int AS busy
       FROM due JOIN webhook_endpoints e ON e.id = due.id
      ORDER BY due.turn, due.last_claimed_at NULLS FIRST, e.id
      LIMIT $2
      FOR NO KEY UPDATE OF e SKIP LOCKED`,
    [maxAttempts, limit],
  )) as { id: string; tenant_id: string; failing: boolean; busy: number }[];
  return rows.map((row) => ({
    endpointId: row.id,
    tenantId: row.tenant_id,
    failing: row.failing,
    busy: row.busy,
  }));
}

/**
 * Leases due deliveries fairly: per endpoint at most what `shareRoom` gave it, and never more in flight
 * than its bound (counted again here, now that the endpoint is locked: another replica's claim may have
 * committed since the candidates were read). Oldest due first within an endpoint.
 */
export async function claimFairly(
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
  const due = await candidates(manager, maxAttempts, Math.min(4 * room, 256));
  const shares = shareRoom(due, room, options.tenantRoom, endpointConcurrency);
  if (shares.size === 0) return [];
  const chosen = due.filter((candidate) => shares.has(candidate.endpointId));
  const [rows] = (await manager.query(
    `UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1,
            lease_until = now() + make_interval(secs => $5::double precision / 1000),
            lease_token = $6
      WHERE d.id IN (
        SELECT c.id FROM unnest($1::uuid[], $2::int[], $3::int[]) AS q(endpoint_id, n, cap)
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS busy FROM webhook_deliveries b
           WHERE b.endpoint_id = q.endpoint_id AND b.lease_token IS NOT NULL AND b.lease_until >= now()) f
        CROSS JOIN LATERAL (
          SELECT x.id FROM webhook_deliveries x
           WHERE x.endpoint_id = q.endpoint_id AND x.status = 'pending' AND x.next_attempt_at <= now()
             AND x.attempts < $4 AND (x.lease_until IS NULL OR x.lease_until < now())
           ORDER BY x.next_attempt_at
           LIMIT greatest(0, least(q.n, q.cap - f.busy))
           FOR UPDATE SKIP LOCKED) c)
      RETURNING d.id, d.event_id, d.endpoint_id, d.tenant_id, d.attempts`,
    [
      chosen.map((candidate) => candidate.endpointId),
      chosen.map((candidate) => shares.get(candidate.endpointId)!),
      chosen.map((candidate) => (candidate.failing ? 1 : endpointConcurrency)),
      maxAttempts,
      leaseMs,
      leaseToken,
    ],
  )) as [
    { id: string; event_id: string; endpoint_id: string; tenant_id: string; attempts: number }[],
    number,
  ];
  if (rows.length > 0)
    await manager.query(
      'UPDATE webhook_endpoints SET last_claimed_at = now() WHERE id = ANY($1::uuid[])',
      [[...new Set(rows.map((row) => row.endpoint_id))]],
    );
  return rows.map((row) => ({
    deliveryId: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    tenantId: row.tenant_id,
    attempt: row.attempts,
  }));
}
