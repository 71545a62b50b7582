import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

export interface Budget {
  limit: number;
  remaining: number;
  /** Seconds until the budget renews (UTC midnight). */
  resetSeconds: number;
}

const TODAY = "(now() AT TIME ZONE 'UTC')::date";

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

/**
 * Unattended reads per consent per UTC day, counted in PostgreSQL so that replicas share them.
 * A read takes its unit before the bank is called and gives it back if the bank refuses, so Portico's
 * count never falls below the bank's and Portico never causes the bank's 429.
 */
@Injectable()
export class BudgetService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** SQL for the units taken today by the consent whose id is the expression (0 when none). */
  static usedTodaySql(consentExpr: string): string {
    return `COALESCE((SELECT count FROM consent_usage WHERE consent_id = ${consentExpr} AND day = ${TODAY}), 0)`;
  }

  /**
   * A CTE named `gate` that takes one unit of the consent `consentParam` within `limitParam` (parameter
   * placeholders of the statement it joins) and returns `budget_count`; no row when the budget is spent.
   */
  static takeGateCte(consentParam: string, limitParam: string): string {
    return `gate AS (
         INSERT INTO consent_usage (consent_id, day, count) VALUES (${consentParam}, ${TODAY}, 1)
         ON CONFLICT (consent_id, day) DO UPDATE SET count = consent_usage.count + 1
           WHERE consent_usage.count < ${limitParam}
         RETURNING count AS budget_count
       )`;
  }

  /** Marks today's budget of the consent used up (`limit` units taken), as the bank counted it. */
  async useUpToday(consentId: string, limit: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO consent_usage (consent_id, day, count) VALUES ($1, ${TODAY}, $2)
       ON CONFLICT (consent_id, day) DO UPDATE SET count = GREATEST(consent_usage.count, excluded.count)`,
      [consentId, limit],
    );
  }

  async giveBack(consentId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE consent_usage SET count = count - 1 WHERE consent_id = $1 AND day = ${TODAY} AND count > 0`,
      [consentId],
    );
  }
}
