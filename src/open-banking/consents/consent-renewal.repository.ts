import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { SCA_RENEWAL_DAYS } from './consent.entity.js';

/** The advisory lock one replica holds while it looks for renewals due. */
export const RENEWAL_DUE_LOCK_KEY = 74_111_007;

/** A valid account-information consent near the end of its SCA or of its validity. */
export interface RenewalCandidate {
  id: string;
  tenant_id: string;
  status: string;
  /** Its last day, `YYYY-MM-DD`. */
  valid_until: string | null;
  last_sca_at: Date | null;
}

/** The SQL of the consent.renewal_due job: its lock and the consents it looks at. */
@Injectable()
export class ConsentRenewalRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in a transaction holding the job's lock; undefined when another replica holds it. */
  withLock<T>(work: (manager: EntityManager) => Promise<T>): Promise<T | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        RENEWAL_DUE_LOCK_KEY,
      ])) as { locked: boolean }[];
      return locked ? work(manager) : undefined;
    });
  }

  /** Valid AIS consents whose SCA renewal or validity ends by `horizon`. */
  async dueBy(manager: EntityManager, horizon: Date): Promise<RenewalCandidate[]> {
    return (await manager.query(
      `SELECT id, tenant_id, status, to_char(valid_until, 'YYYY-MM-DD') AS valid_until, last_sca_at
         FROM consents
        WHERE kind = 'ais' AND status = 'valid'
          AND ((last_sca_at IS NOT NULL AND last_sca_at + make_interval(days => $1) <= $2)
            OR (valid_until IS NOT NULL AND valid_until + 1 <= $2::timestamptz::date))`,
      [SCA_RENEWAL_DAYS, horizon],
    )) as RenewalCandidate[];
  }
}
