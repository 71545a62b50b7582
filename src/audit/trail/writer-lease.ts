import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';

/** This process as a writer of the trail: every access-log row it writes ahead carries it (`writer`). */
export const WRITER_ID = randomUUID();
/** The SQL literal of WRITER_ID, for the statements that write rows ahead. */
export const WRITER_SQL = `'${WRITER_ID}'::uuid`;
/** How long a lease lasts unrenewed: past it, the process is taken for dead. */
export const WRITER_LEASE_MS = 15_000;
/** How often a live process renews it. */
const RENEW_MS = 1_000;

/**
 * A lease per process in `writer_leases`, renewed every second while the process reaches the database.
 * The sealer reads it (AuditChainRepository.unsealed): a row still `sent` whose writer holds its lease is
 * not sealed, since the process may still hold the call's completion (the database away, or its
 * sessions terminated, when it tried to write it), and writes it when the database is back. A lease
 * renewed after it lapsed starts anew (`held_since`): a sealer judges other writers dead only once its
 * own lease has been held for WRITER_LEASE_MS without a break, so after an outage of every replica none
 * seals what a live one has not had the time to complete.
 */
@Injectable()
export class WriterLeaseService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'writer-lease',
      intervalMs: RENEW_MS,
      runAtStart: true,
      run: () => this.renew(),
    });
  }

  async renew(): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO writer_leases (writer, held_since, expires_at)
       VALUES ($1, now(), now() + make_interval(secs => $2 / 1000.0))
       ON CONFLICT (writer) DO UPDATE
         SET held_since = CASE WHEN writer_leases.expires_at < now() THEN now() ELSE writer_leases.held_since END,
             expires_at = excluded.expires_at`,
      [WRITER_ID, WRITER_LEASE_MS],
    );
  }
}

/**
 * The SQL condition (on the access-log row aliased `alias`) that its writer may hold its completion: the
 * writer's lease is live, or the sealer's own lease (`sealerParam`, a parameter holding WRITER_ID) has
 * not been held long enough to tell (see WriterLeaseService). Rows of no known writer (written before
 * leases, or by hand) never wait on one.
 */
export function writerMayHoldSql(alias: string, sealerParam: string): string {
  return `(${alias}.writer IS NOT NULL AND (
            EXISTS (SELECT 1 FROM writer_leases l WHERE l.writer = ${alias}.writer AND l.expires_at >= now())
            OR NOT EXISTS (SELECT 1 FROM writer_leases s WHERE s.writer = ${sealerParam}::uuid AND s.expires_at >= now()
                             AND s.held_since <= now() - make_interval(secs => ${WRITER_LEASE_MS / 1000}))))`;
}
