export interface Budget {
  limit: number;
  remaining: number;
  /** Seconds until the budget renews (UTC midnight). */
  resetSeconds: number;
}

/** Seconds until the next 00:00 UTC, when the daily budgets renew. */
export function secondsToUtcMidnight(now = new Date()): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

/** A budget of `limit` with `count` units taken today. */
export function budgetOf(limit: number, count: number): Budget {
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: secondsToUtcMidnight(),
  };
}
