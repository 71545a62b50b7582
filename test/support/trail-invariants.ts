import { pino } from 'pino';
import { DataSource } from 'typeorm';
import { loadConfig, type AppConfig } from '#src/platform/config/app-config.js';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { AuditChainRepository, type ChainHead } from '#src/audit/trail/audit-chain.repository.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import type { Scheduler } from '#src/platform/scheduler/scheduler.js';

/** Where the chain stood when a gateway started: what the check at its end verifies from. */
export type TrailMark = { seq: string; chainHash: string } | undefined;

/** Why a test skips the check (it tampers with the trail or kills a process on purpose). */
export interface Unchecked {
  unchecked: string;
}

export async function trailMark(dataSource: DataSource): Promise<TrailMark> {
  const head = await new AuditChainRepository(dataSource).head();
  return head && markOf(head);
}

const markOf = (head: ChainHead) => ({ seq: String(head.seq), chainHash: head.chain_hash });

/**
 * The audit trail's invariants, checked at the end of every test that ran a gateway (after it stopped):
 * the chain, sealed now, verifies from where it stood when the gateway started, and no access-log row of
 * the gateway's own tenants (every tenant, on a database of its own) is left `sent`. Safe beside other test files on the same database: the seal
 * takes the sealers' lock, only the links made since the mark are walked, and only this gateway's
 * tenants are looked at. Its own rows are sealed at once (no grace); another gateway's calls may have
 * their own deadlines, so rows still `sent` wait ten minutes rather than this gateway's deadlines.
 */
export async function checkTrailInvariants(
  config: AppConfig,
  since: TrailMark,
  tenantIds: Iterable<string> | 'all',
): Promise<void> {
  const checked: AppConfig = {
    ...config,
    audit: { ...config.audit, sealGraceMs: 0 },
    upstreams: {
      ...config.upstreams,
      openBanking: {
        ...config.upstreams.openBanking,
        http: { ...config.upstreams.openBanking.http, deadlineMs: 600_000 },
      },
      pos: { ...config.upstreams.pos, paymentDeadlineMs: 600_000 },
    },
  };
  const dataSource = new DataSource(dataSourceOptions(config.database.url!, 1));
  await dataSource.initialize();
  try {
    const links = new AuditChainRepository(dataSource);
    const chain = new AuditChainService(links, checked, pino({ enabled: false }), {} as Scheduler);
    await chain.seal();
    const report = await new AuditVerifierService(links, chain, checked).verify({ since });
    const sent = (await dataSource.query(
      `SELECT id, operation, created_at FROM access_log
        WHERE outcome = 'sent' AND ($1::uuid[] IS NULL OR tenant_id = ANY($1::uuid[])) ORDER BY id LIMIT 5`,
      [tenantIds === 'all' ? null : [...tenantIds]],
    )) as { id: string; operation: string; created_at: Date }[];
    const problems = [
      ...(report.firstBreak
        ? [`the audit chain does not verify: ${JSON.stringify(report.firstBreak)}`]
        : []),
      ...sent.map(
        (row) =>
          `access_log ${row.id} (${row.operation}, ${row.created_at.toISOString()}) is left \`sent\` by a gateway that stopped`,
      ),
    ];
    if (problems.length > 0)
      throw new Error(
        `${problems.join('\n')}\n(a test that breaks these on purpose says so: close({ unchecked: 'why' }))`,
      );
  } finally {
    await dataSource.destroy();
  }
}

/**
 * The same check on the data directory of a gateway process that ran the embedded engine itself, once
 * it stopped: its database is its own, so every tenant's rows are its.
 */
export async function checkEmbeddedTrail(
  dataDir: string,
  env: Record<string, string>,
): Promise<void> {
  const engine = await startEmbeddedPostgres(dataDir);
  try {
    await checkTrailInvariants(loadConfig({ ...env, DATABASE_URL: engine.url }), undefined, 'all');
  } finally {
    await engine.stop();
  }
}
