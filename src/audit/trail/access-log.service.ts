import { Inject, Injectable, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { Repository } from 'typeorm';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { PlainSql } from '#src/platform/database/plain-sql.js';
import { StatementGroup } from '#src/platform/database/statement-group.js';
import { currentRequestId } from '#src/platform/logging/request-context.js';
import { AccessLogEntry } from './access-log-entry.entity.js';
import {
  CompletionQueue,
  paramsOf,
  type Completion,
  type CompletionParams,
} from './completion-queue.js';
import { WRITER_SQL } from './writer-lease.js';
import { sameMonthSql } from './chain-hash.js';

/** Who made a call, under what, and on which account: the part of a row known before the call. */
export type AccessSubject = Pick<AccessLogEntry, 'tenantId' | 'operation' | 'psuPresent'> &
  Partial<Pick<AccessLogEntry, 'consentId' | 'paymentId' | 'accountId' | 'cardResourceId'>> & {
    /** The call's own deadline when it has one (a POS payment); unset: the read deadline. */
    deadlineMs?: number;
  };

/** How a call ended. */
export interface AccessOutcome {
  outcome: string;
  upstreamStatus?: number | null;
  latencyMs: number;
}

/** The outcome of a row written before the bank was called and not completed yet. */
export const SENT = 'sent';

/**
 * A condition written in the same statement as the row (e.g. taking a unit of the daily budget):
 * CTEs that define `gate`, whose parameters are numbered from $9 on; the row is written only when
 * `gate` has a row, and that row comes back with the row's id.
 */
export interface AccessGate {
  name: string;
  cte: string;
  params: unknown[];
}

const INSERT_SENT = `INSERT INTO access_log
         (tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id, outcome,
          card_resource_id, deadline_at, writer)`;

/** The row's deadline_at from its deadline in milliseconds (null: none of its own), by the database's clock. */
const deadlineAt = (ms: string) => `now() + make_interval(secs => ${ms} / 1000.0)`;

/** How many parameters a written-ahead row takes ($1…$10); a gate's own parameters follow them. */
export const SENT_PARAMETERS = 10;
/** The columns of a row recorded whole ($1…$9, as sentValues gives them). */
const RECORDED_PARAMETERS = 9;
/** Where the outcome is among them. */
const OUTCOME_PARAMETER = 7;

/**
 * A row is completed within this long of being written ahead, or never: it bounds the completion to the
 * newest month partitions (a row is sealed, and can no longer be completed, minutes after its deadline).
 */
const COMPLETION_WINDOW_MS = 86_400_000;

/** How long a completion written after the answer waits for a statement to carry it (completeSoon). */
export const COMPLETION_DELAY_MS = 5;

/**
 * The statement completing rows written ahead, from four arrays numbered from `$first`
 * (CompletionParams). A row already sealed is left as it is (`sent`) rather than failing the statement:
 * the trigger would refuse it, and with it every other completion and the statement carrying them.
 * `OFFSET 0` keeps the check a probe of the chain's (entry_kind, entry_id) index per row, whatever the
 * statistics say: planned as an anti-join on a never-analysed chain (the embedded engine has no
 * autovacuum), it read every link of the kind for each row, and grew with the chain.
 */
function completeSql(first: number, returning = ''): string {
  const [ids, outcomes, statuses, latencies] = [0, 1, 2, 3].map((offset) => `$${first + offset}`);
  return `UPDATE access_log a
            SET outcome = u.outcome, upstream_status = u.upstream_status, latency_ms = u.latency_ms,
                completed_at = now()
           FROM unnest(${ids}::bigint[], ${outcomes}::text[], ${statuses}::int[], ${latencies}::int[])
                AS u(id, outcome, upstream_status, latency_ms)
          WHERE a.id = u.id AND a.outcome = '${SENT}'
            AND a.created_at > now() - make_interval(secs => ${COMPLETION_WINDOW_MS / 1000})
            AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = 'access_log' AND c.entry_id = a.id AND ${sameMonthSql('c.entry_at', 'a.created_at')} OFFSET 0)
          ${returning}`;
}

/**
 * Writes the audit trail of every call made under a consent or a payment. A call to the bank is
 * written ahead (`begin`, outcome `sent`) and completed after (`complete`), so that a crash between
 * the two leaves a row saying the call was sent with its outcome unknown; a call Portico refused
 * itself is one row (`record`).
 */
@Injectable()
export class AccessLogService implements BeforeApplicationShutdown {
  private readonly sql: PlainSql;
  private readonly soon: CompletionQueue;

  constructor(
    @InjectRepository(AccessLogEntry) private readonly entries: Repository<AccessLogEntry>,
    @Inject(LOGGER) private readonly logger: Logger,
    // Absent in the CLI, which serves no metrics.
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.sql = new PlainSql(entries.manager.connection);
    this.soon = new CompletionQueue(
      async (params) =>
        (
          await this.sql.query<{ id: string }>(
            'access-log:complete-soon',
            completeSql(1, 'RETURNING a.id'),
            params,
          )
        ).map((row) => String(row.id)),
      COMPLETION_DELAY_MS,
      (error, waiting) =>
        logger.error({ err: error, waiting }, 'access log: completions not written yet'),
      (missed) =>
        this.notCompleted(missed, new Error('the row is sealed or was completed already')),
    );
  }

  /** Completions still waiting are written before the database is closed. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flushCompletions().catch(() => undefined);
  }

  /**
   * A CTE (named `name`) for a statement that writes rows ahead of bank calls as part of more work
   * (the consent-access admission): it inserts one `sent` row for each row of `source` whose `log_id`
   * is not null, with that id (taken from nextAccessLogId), its `tenant_id`, `consent_id`, `operation`,
   * `account_id`, `psu_present` and `request_id`. Complete the rows with `complete`.
   */
  static writeAheadCte(name: string, source: string): string {
    return `${name} AS (
         INSERT INTO access_log (id, tenant_id, consent_id, operation, account_id, psu_present, request_id, outcome, writer)
         SELECT log_id, tenant_id, consent_id, operation, account_id, psu_present, request_id, '${SENT}', ${WRITER_SQL}
           FROM ${source} WHERE log_id IS NOT NULL ORDER BY log_id
       )`;
  }

  /** The SQL expression that takes the id of a row written with writeAheadCte. */
  static readonly nextAccessLogId = `nextval(pg_get_serial_sequence('access_log', 'id'))`;

  /**
   * Records a call about to be sent to the bank; returns the row's id, for `complete`. Rows begun
   * while one statement is in flight are written together by the next one (a group write).
   */
  begin(subject: AccessSubject): Promise<string> {
    return this.begun.run([...sentValues(subject), subject.deadlineMs ?? null]);
  }

  private readonly begun = new StatementGroup<unknown[], string>(async (rows) => {
    const column = (index: number) => rows.map((row) => row[index]);
    // Rows come back in the order of the SELECT (ORDER BY ord), as PostgreSQL inserts them.
    const inserted = await this.sql.query<{ id: string }>(
      'access-log:begin-group',
      `${INSERT_SENT}
       SELECT tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id, outcome,
              card_resource_id, ${deadlineAt('deadline_ms')}, ${WRITER_SQL}
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::varchar[], $5::varchar[], $6::boolean[],
                     $7::uuid[], $8::varchar[], $9::uuid[], $10::int[])
              WITH ORDINALITY AS r(tenant_id, consent_id, payment_id, operation, account_id, psu_present,
                                   request_id, outcome, card_resource_id, deadline_ms, ord)
        ORDER BY ord
       RETURNING id`,
      Array.from({ length: SENT_PARAMETERS }, (_, index) => column(index)),
    );
    return inserted.map((row) => String(row.id));
  }, 'access-log:begin');

  /**
   * A call about to be sent, written ahead as a CTE named `name` (its `id` the row's) of a statement
   * that writes more (the ledger's new row with its first history entry), its parameters numbered from
   * `first` on. Complete the row with `complete` or `completeSoon`.
   */
  static writeAheadRow(
    name: string,
    subject: AccessSubject,
    first: number,
  ): { cte: string; params: unknown[] } {
    const $ = Array.from({ length: SENT_PARAMETERS }, (_, index) => `$${first + index}`);
    return {
      cte: `${name} AS (
         ${INSERT_SENT}
         VALUES (${$[0]}::uuid, ${$[1]}::uuid, ${$[2]}::uuid, ${$[3]}, ${$[4]}, ${$[5]}::boolean, ${$[6]}::uuid,
                 ${$[7]}, ${$[8]}::uuid, ${deadlineAt(`${$[9]}::int`)}, ${WRITER_SQL})
         RETURNING id)`,
      params: [...sentValues(subject), subject.deadlineMs ?? null],
    };
  }

  /**
   * As begin, in one statement with a condition (AccessGate): the row's id and the gate's row, or
   * undefined when the gate let nothing through (no row written).
   */
  async beginGated<G>(
    subject: AccessSubject,
    gate: AccessGate,
  ): Promise<{ id: string; gate: G } | undefined> {
    const [row] = await this.sql.query<G & { access_log_id: string }>(
      `access-log:begin:${gate.name}`,
      `WITH ${gate.cte},
       logged AS (
         ${INSERT_SENT} SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, ${deadlineAt('$10::int')}, ${WRITER_SQL} FROM gate
         RETURNING id
       )
       SELECT gate.*, logged.id AS access_log_id FROM gate, logged`,
      [...sentValues(subject), subject.deadlineMs ?? null, ...gate.params],
    );
    if (!row) return undefined;
    return { id: String(row.access_log_id), gate: row };
  }

  /**
   * Records the outcome of a call written ahead; a row is completed once (the trigger refuses more).
   * Completions that arrive while one statement is in flight are written together by the next one
   * (a group write: one round-trip for many concurrent calls); each caller still waits for its row.
   * Never rejects: the provider's answer stands whatever becomes of its log row. False when the row
   * was not completed now: with the database away the outcome waits in the process and is written when
   * it is back (completeSoon); a row already sealed keeps `sent`, is logged and counted.
   */
  complete(id: string, result: AccessOutcome): Promise<boolean> {
    return this.completed.run(completionOf(id, result));
  }

  private readonly completed = new StatementGroup<Completion, boolean>(async (batch) => {
    try {
      const rows = await this.sql.query<{ id: string }>(
        'access-log:complete-returning',
        completeSql(1, 'RETURNING a.id'),
        paramsOf(batch),
      );
      const written = new Set(rows.map((row) => String(row.id)));
      const missed = batch.filter((completion) => !written.has(completion.id));
      if (missed.length > 0)
        this.notCompleted(missed, new Error('the row is sealed or was completed already'));
      return batch.map((completion) => written.has(completion.id));
    } catch (error) {
      // The database away or the session cut: the outcome is kept and written once it is back, as a
      // completion after the answer is (the row's writer lives meanwhile, so it is not sealed `sent`).
      this.logger.warn(
        { err: error, rows: batch.length },
        'access log: completions not written yet',
      );
      for (const completion of batch) this.soon.add(completion);
      return batch.map(() => false);
    }
  }, 'access-log:complete');

  private notCompleted(completions: Completion[], error: unknown): void {
    this.metrics?.recordAccessLogNotCompleted(completions.length);
    this.logger.error(
      {
        err: error,
        accessLogIds: completions.slice(0, 20).map((completion) => completion.id),
        rows: completions.length,
      },
      'access log row not completed; it keeps `sent`',
    );
  }

  /**
   * Records the outcome of a call already answered, after the answer: it rides along with the next
   * statement that carries completions (carryCompletions), or is written on its own within
   * COMPLETION_DELAY_MS. Until then (and for good if the process dies first) the row says `sent`.
   * The auditor's views write what waits before they read (flushCompletions).
   */
  completeSoon(id: string, result: AccessOutcome): void {
    this.soon.add(completionOf(id, result));
  }

  /**
   * A CTE (named `name`) that writes the completions handed over by carryCompletions, from four
   * parameters numbered from `$first` (with `returning`, `RETURNING a.id`: the rows it completed).
   */
  static completionCte(name: string, first: number, returning = false): string {
    return `${name} AS (${completeSql(first, returning ? 'RETURNING a.id' : '')})`;
  }

  /**
   * The ids (text[]) of the rows the completionCte `name` (made with `returning`) completed, for the
   * statement's first row (`AS completed`), where carryCompletions' `completed` reads them.
   */
  static completedIdsSql(name: string): string {
    return `ARRAY(SELECT id::text FROM ${name})`;
  }

  /**
   * Runs a statement with a completionCte, handing it the completions waiting (put back if it fails);
   * with `completed` (the ids its completionCte returned, from its result), those it could not
   * complete are logged and counted as `complete` does.
   */
  carryCompletions<T>(
    run: (params: CompletionParams) => Promise<T>,
    completed?: (result: T) => string[],
  ): Promise<T> {
    return this.soon.carry(run, completed);
  }

  /** Writes every completion waiting in this process (before the log is read). */
  flushCompletions(): Promise<void> {
    return this.soon.flush();
  }

  /**
   * Records a call that never reached the bank (refused by Portico, or answered from the store);
   * rows recorded while one statement is in flight are written together by the next one.
   */
  record(subject: AccessSubject, result: AccessOutcome): Promise<void> {
    const row = sentValues(subject);
    row[OUTCOME_PARAMETER] = result.outcome;
    return this.recorded.run([...row, result.upstreamStatus ?? null, result.latencyMs]);
  }

  private readonly recorded = new StatementGroup<unknown[], void>(async (rows) => {
    const column = (index: number) => rows.map((row) => row[index]);
    await this.sql.query(
      'access-log:record-group',
      `INSERT INTO access_log
         (tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id, outcome,
          card_resource_id, upstream_status, latency_ms, completed_at)
       SELECT tenant_id, consent_id, payment_id, operation, account_id, psu_present, request_id, outcome,
              card_resource_id, upstream_status, latency_ms, now()
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::varchar[], $5::varchar[], $6::boolean[],
                     $7::uuid[], $8::varchar[], $9::uuid[], $10::int[], $11::int[])
              WITH ORDINALITY AS r(tenant_id, consent_id, payment_id, operation, account_id, psu_present,
                                   request_id, outcome, card_resource_id, upstream_status, latency_ms, ord)
        ORDER BY ord`,
      Array.from({ length: RECORDED_PARAMETERS + 2 }, (_, index) => column(index)),
    );
    return rows.map(() => undefined);
  }, 'access-log:record');

  async forConsent(consentId: string, limit = 500): Promise<AccessLogEntry[]> {
    await this.flushCompletions();
    return this.entries.find({ where: { consentId }, order: { id: 'DESC' }, take: limit });
  }

  async forCardResource(cardResourceId: string, limit = 500): Promise<AccessLogEntry[]> {
    await this.flushCompletions();
    return this.entries.find({ where: { cardResourceId }, order: { id: 'DESC' }, take: limit });
  }

  async forPayment(paymentId: string, limit = 500): Promise<AccessLogEntry[]> {
    await this.flushCompletions();
    return this.entries.find({ where: { paymentId }, order: { id: 'DESC' }, take: limit });
  }
}

function completionOf(id: string, result: AccessOutcome): Completion {
  return {
    id,
    outcome: result.outcome,
    upstreamStatus: result.upstreamStatus ?? null,
    latencyMs: result.latencyMs,
  };
}

function sentValues(subject: AccessSubject): unknown[] {
  return [
    subject.tenantId,
    subject.consentId ?? null,
    subject.paymentId ?? null,
    subject.operation,
    subject.accountId ?? null,
    subject.psuPresent,
    currentRequestId() ?? null,
    SENT,
    subject.cardResourceId ?? null,
  ];
}
