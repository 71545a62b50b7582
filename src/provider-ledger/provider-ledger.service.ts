import { Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityMetadata, type FindOptionsWhere } from 'typeorm';
import { AccessLogService, type AccessSubject } from '../audit/trail/access-log.service.js';
import { builtStatementName, PlainSql } from '../platform/database/plain-sql.js';
import { StatusHistoryService } from '../audit/trail/status-history.service.js';
import { ProblemException } from '../platform/errors/problem.js';
import {
  bindIdempotentResource,
  idempotentBindCte,
} from '../platform/idempotency/idempotency-binding.js';
import { inDoubtSummary, leaseInDoubt } from '../platform/in-doubt/in-doubt-lease.js';
import { Metrics } from '../platform/metrics/metrics.service.js';
import { stateGauge } from '../platform/metrics/state-gauge.js';
import { admittedToWrite } from '../platform/logging/request-context.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';
import {
  failureOutcome,
  inDoubtProblem,
  outcomeUnknown,
  type UpstreamAnswer,
} from '../upstreams/http/upstream-caller.js';
import type { LedgerRow, LedgerTable } from './ledger-table.js';

/** What a capability brings to a write on an existing row (a capture); the ledger does the rest in one order. */
export interface WriteSteps<R extends LedgerRow, T> {
  /** The facade path the Idempotency-Key is bound to, and that a write in doubt tells the app to follow. */
  resource: string;
  /** How the in-doubt problem names the row besides `resource` (`{ paymentId: row.id }`). */
  names(row: R): Record<string, string>;
  /** The provider call (through ProviderLedger.call): its answer, or its refusal or the seam's failure thrown. */
  send(): Promise<T>;
  /** Takes the answer into the row: data and status (with history, and the event by the transition hook). */
  settle(answer: T): Promise<void>;
  /** The history cause of the row's move to `unknown` (default `upstream-outcome-unknown`). */
  unknownCause?: string;
}

/** What a capability brings to the create sequence; the ledger does the rest in one order. */
export interface CreateSteps<R extends LedgerRow, T> extends WriteSteps<R, T> {
  /** The history cause of a write the provider certainly did not make (default `upstream-refused`). */
  refusedCause?(error: unknown): string;
  /**
   * A look at the provider at once when the outcome is unknown (a handle such as a merchant_ref): the
   * answer when found (the row settled), null when certainly not made (the row failed), undefined when
   * still in doubt. Its own failures must answer undefined.
   */
  lookup?(): Promise<T | null | undefined>;
}

/** A kind of row the resolver settles with its provider: the ledger leases each row, `settle` settles one. */
export interface InDoubtKind<R extends LedgerRow> {
  table: LedgerTable<R>;
  /** provider_resources: only the rows of this kind. */
  kind?: string;
  /** How to settle one row: an error (or no change) leaves it in doubt for the next pass. */
  settle(row: R): Promise<unknown>;
}

/** Rows leased per statement. */
const LEASE_BATCH = 20;

/**
 * The provider-resource ledger: the one mechanism that makes a provider call safe, for every upstream
 * (open banking, card, marketplace, wallets, POS) and every table that keeps their resources. A row is
 * begun with its first status, each provider call is written ahead in the access log and completed
 * after, a create binds the Idempotency-Key before the call and ends `failed` only when the provider
 * certainly did not act (`unknown` otherwise, with a problem naming the resource), status changes are
 * compare-and-set with history (and their webhook event through the trail's transition hook), and the
 * rows left in doubt are settled under a lease by the one resolver. Capabilities declare their tables,
 * kinds, and how to settle one row.
 */
@Injectable()
export class ProviderLedger {
  constructor(
    private readonly dataSource: DataSource,
    private readonly history: StatusHistoryService,
    private readonly accessLog: AccessLogService,
    private readonly settlers: InDoubtSettlers,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.sql = new PlainSql(dataSource);
  }

  /** Every kind registered with the resolver, for the rows-in-doubt gauges. */
  private readonly inDoubtKinds: { olderThanMs: () => number; kind: InDoubtKind<LedgerRow> }[] = [];
  private inDoubtGaugesRegistered = false;

  private readonly sql: PlainSql;

  /**
   * Stores a row about to be created at the provider with its first history entry, (given the call
   * that follows) that call written ahead in the access log, and (given the facade path of the row,
   * `boundResource`) the request's Idempotency-Key bound to it: one statement, one commit. The call
   * about the row with that operation (`call`, `about` the row) then uses the row written ahead, and
   * the create sequence's bind finds the key bound.
   */
  async begin<R extends LedgerRow>(
    table: LedgerTable<R>,
    row: R,
    writeAhead?: AccessSubject,
    boundResource?: string,
  ): Promise<R> {
    const admission = admittedToWrite();
    if (admission) await admission;
    const metadata = this.dataSource.getMetadata(table.entity);
    const { insert, params } = this.insertOf(metadata, row);
    const history = this.history.firstEntry(
      'history',
      { ...row, kind: table.subjectKind(row) },
      params.length + 1,
    );
    const logged =
      writeAhead &&
      AccessLogService.writeAheadRow(
        'logged',
        { ...writeAhead, ...table.accessSubject(row) },
        params.length + history.params.length + 1,
      );
    const bind =
      boundResource &&
      idempotentBindCte(
        'bound',
        boundResource,
        params.length + history.params.length + (logged?.params.length ?? 0) + 1,
      );
    const text = `WITH created AS (${insert} RETURNING *), ${history.cte}${logged ? `, ${logged.cte}` : ''}${bind ? `, ${bind.cte}` : ''}
       SELECT to_jsonb(created) AS created, ${logged ? '(SELECT id FROM logged)' : 'NULL'} AS log_id
         FROM created`;
    const [written] = await this.sql.query<{
      created: Record<string, unknown> | null;
      log_id: string | null;
    }>(builtStatementName(`ledger:begin:${table.name}`, text), text, [
      ...params,
      ...history.params,
      ...(logged?.params ?? []),
      ...(bind ? bind.params : []),
    ]);
    if (bind) bind.written();
    // The values the database gave the row (its defaults, its timestamps), as TypeORM's insert sets them.
    for (const column of metadata.columns) {
      const value = written?.created?.[column.databaseName];
      if (
        value !== undefined &&
        (row as Record<string, unknown>)[column.propertyName] === undefined
      )
        (row as Record<string, unknown>)[column.propertyName] =
          this.dataSource.driver.prepareHydratedValue(value, column);
    }
    if (writeAhead && written?.log_id)
      this.writtenAhead.set(row, {
        operation: writeAhead.operation,
        logId: String(written.log_id),
      });
    return row;
  }

  /**
   * The INSERT of a row: the columns it has a value for (prepared as TypeORM's insert prepares them),
   * the others left to their defaults (generated ids, timestamps). Built from the entity's metadata
   * rather than by TypeORM's query builder, which took about 4 % of the gateway's CPU during the writes.
   */
  private insertOf(metadata: EntityMetadata, row: object): { insert: string; params: unknown[] } {
    const { driver } = this.dataSource;
    const names: string[] = [];
    const params: unknown[] = [];
    for (const column of metadata.columns) {
      if (!column.isInsert) continue;
      const value = column.getEntityValue(row);
      if (value === undefined) continue;
      names.push(driver.escape(column.databaseName));
      params.push(driver.preparePersistentValue(value, column));
    }
    const into = `INSERT INTO ${metadata.tablePath.split('.').map(driver.escape, driver).join('.')}`;
    if (names.length === 0) return { insert: `${into} DEFAULT VALUES`, params };
    const placeholders = params.map((_, index) => `$${index + 1}`);
    return { insert: `${into} (${names.join(', ')}) VALUES (${placeholders.join(', ')})`, params };
  }

  /** Calls written ahead with their row's begin, not sent yet: the row's call takes its log id. */
  private readonly writtenAhead = new WeakMap<LedgerRow, { operation: string; logId: string }>();

  /**
   * Moves a row to `to` and records it (history, event), as a compare-and-set on the status the caller
   * saw: when another request or replica moved it first, nothing is written, `row.status` becomes the
   * stored one, and the answer is false.
   */
  transition<R extends LedgerRow>(
    table: LedgerTable<R>,
    row: R,
    to: string,
    cause: string,
    columns?: Partial<R>,
  ): Promise<boolean> {
    return this.history.transition(table, table.subjectKind(row), row, to, cause, columns);
  }

  /**
   * A change that keeps the status (an update, `columns` written with it): recorded in the history
   * all the same.
   */
  changed<R extends LedgerRow>(
    table: LedgerTable<R>,
    row: R,
    cause: string,
    columns?: Partial<R>,
  ): Promise<void> {
    return this.history.touch(table, table.subjectKind(row), row, cause, columns);
  }

  /**
   * Calls a provider (`send`: any upstream client's call), written ahead in the access log and completed
   * after with the outcome: `ok`, the provider's refusal code, or the seam's failure (`unknown:504` when
   * the provider may have acted). Refusals (4xx) are answered, failures rethrown, for the caller to judge.
   * A call `about` a row begun with this call written ahead uses that row of the log, and its answer
   * is completed by the statement that takes the answer into the row (the create's settling carries it).
   */
  async call<T>(
    subject: AccessSubject,
    send: () => Promise<UpstreamAnswer<T>>,
    about?: LedgerRow,
  ): Promise<UpstreamAnswer<T>> {
    const started = performance.now();
    const ahead = this.takeWrittenAhead(about, subject.operation);
    const logId = ahead ?? (await this.writeAhead(subject));
    const latencyMs = () => Math.round(performance.now() - started);
    let answer: UpstreamAnswer<T>;
    try {
      answer = await send();
    } catch (error) {
      const upstream = error instanceof ProblemException ? error.init.extensions?.upstream : null;
      await this.accessLog.complete(logId, {
        outcome: failureOutcome(error),
        upstreamStatus: (upstream as { status?: number } | null)?.status ?? null,
        latencyMs: latencyMs(),
      });
      throw error;
    }
    const outcome = {
      outcome: answer.status < 400 ? 'ok' : `upstream:${answer.messages[0]?.code ?? answer.status}`,
      upstreamStatus: answer.status,
      latencyMs: latencyMs(),
    };
    if (ahead && answer.status < 400) this.accessLog.completeSoon(logId, outcome);
    else await this.accessLog.complete(logId, outcome);
    return answer;
  }

  /** The log row written ahead with `row`'s begin for this operation, taken once. */
  private takeWrittenAhead(row: LedgerRow | undefined, operation: string): string | undefined {
    const ahead = row && this.writtenAhead.get(row);
    if (!ahead || ahead.operation !== operation) return undefined;
    this.writtenAhead.delete(row);
    return ahead.logId;
  }

  /** A row's call written ahead and never sent (its sequence stopped before it): completed so. */
  async notSent(row: LedgerRow): Promise<void> {
    const ahead = this.writtenAhead.get(row);
    if (!ahead) return;
    this.writtenAhead.delete(row);
    await this.accessLog.complete(ahead.logId, { outcome: 'not-sent', latencyMs: 0 });
  }

  /**
   * A provider call's access-log row written ahead (outcome `sent`), for a call whose outcome its caller
   * records (the consent-access guard, around the handler); `call` writes and completes it itself.
   */
  writeAhead(subject: AccessSubject): Promise<string> {
    // On the consent read's path: no promise step unless a count is still in flight.
    const admission = admittedToWrite();
    return admission
      ? admission.then(() => this.accessLog.begin(subject))
      : this.accessLog.begin(subject);
  }

  /**
   * The create sequence, for a row just begun: bind the Idempotency-Key, call; a refusal (or a call
   * certainly not sent) fails the row and is rethrown; an unknown outcome leaves the row `unknown` (a
   * lookup may settle it at once) and answers the in-doubt problem naming the resource; an answer settles
   * the row.
   */
  create<R extends LedgerRow, T>(
    table: LedgerTable<R>,
    row: R,
    steps: CreateSteps<R, T>,
  ): Promise<T> {
    return this.sequence(table, row, steps, (error) =>
      this.transition(table, row, 'failed', steps.refusedCause?.(error) ?? 'upstream-refused'),
    );
  }

  /**
   * A write on a row that exists at the provider (a capture), in the create's order: a refusal leaves
   * the row as it is; an unknown outcome leaves it `unknown` for the resolver.
   */
  write<R extends LedgerRow, T>(
    table: LedgerTable<R>,
    row: R,
    steps: WriteSteps<R, T>,
  ): Promise<T> {
    return this.sequence(table, row, steps, async () => undefined);
  }

  private async sequence<R extends LedgerRow, T>(
    table: LedgerTable<R>,
    row: R,
    steps: CreateSteps<R, T>,
    refused: (error: unknown) => Promise<unknown>,
  ): Promise<T> {
    // A call written ahead with the row and not sent by now (bound, sent or not) is completed so.
    await bindIdempotentResource(steps.resource).catch(async (error: unknown) => {
      await this.notSent(row);
      throw error;
    });
    let answer: T;
    try {
      answer = await steps.send().finally(() => this.notSent(row));
    } catch (error) {
      if (!outcomeUnknown(error) || !(error instanceof ProblemException)) {
        await refused(error);
        throw error;
      }
      await this.transition(
        table,
        row,
        'unknown',
        steps.unknownCause ?? 'upstream-outcome-unknown',
      );
      const found = steps.lookup ? await steps.lookup() : undefined;
      if (found === null) throw error;
      if (found !== undefined) return found;
      throw inDoubtProblem(error, { ...steps.names(row), resource: steps.resource });
    }
    await steps.settle(answer);
    return answer;
  }

  /**
   * Registers a capability's rows in doubt with the one resolver (under `name` in its log): each pass
   * settles the rows of each kind older than `olderThanMs()` (past any call still in flight).
   */
  /**
   * A capability's mending of what a fault parted between two of its writes (the second never
   * written), run by the resolver with its writes in doubt; `mend` answers how many it mended.
   */
  onMend(name: string, mend: () => Promise<number>): void {
    this.settlers.register({ name, settle: mend });
  }

  onInDoubt(
    name: string,
    olderThanMs: () => number,
    kinds: readonly InDoubtKind<LedgerRow>[],
  ): void {
    this.settlers.register({ name, settle: () => this.settleInDoubt(kinds, olderThanMs()) });
    if (!this.inDoubtGaugesRegistered && this.metrics) this.registerInDoubtGauges(this.metrics);
    this.inDoubtGaugesRegistered = true;
    this.inDoubtKinds.push(...kinds.map((kind) => ({ olderThanMs, kind })));
  }

  /**
   * `portico_in_doubt_rows` and `portico_in_doubt_oldest_seconds` by kind (the table's name where it
   * holds one kind): what the resolver has yet to settle, read at each scrape.
   */
  private registerInDoubtGauges(metrics: Metrics): void {
    const summaries = () =>
      Promise.all(
        this.inDoubtKinds.map(async ({ olderThanMs, kind }) => ({
          labels: { kind: kind.kind ?? kind.table.name },
          ...(await inDoubtSummary(
            this.dataSource.manager,
            kind.table.name,
            olderThanMs(),
            kind.kind,
          )),
        })),
      );
    stateGauge(metrics, {
      name: 'portico_in_doubt_rows',
      help: 'Rows whose provider call has no known outcome yet (creating past its deadline, or unknown), by kind',
      labelNames: ['kind'],
      read: async () => (await summaries()).map(({ labels, rows }) => ({ labels, value: rows })),
    });
    stateGauge(metrics, {
      name: 'portico_in_doubt_oldest_seconds',
      help: 'Age of the oldest row in doubt, by kind (0 when none)',
      labelNames: ['kind'],
      read: async () =>
        (await summaries()).map(({ labels, oldestSeconds }) => ({ labels, value: oldestSeconds })),
    });
  }

  /**
   * One pass over the rows of these kinds left in doubt, each under a lease (of N replicas one works a
   * row; a crashed worker's lease lapses); a row it cannot settle yet stays for the next pass. Answers
   * how many rows it took.
   */
  async settleInDoubt(
    kinds: readonly InDoubtKind<LedgerRow>[],
    olderThanMs: number,
  ): Promise<number> {
    let worked = 0;
    for (const kind of kinds)
      for (;;) {
        const ids = await leaseInDoubt(
          this.dataSource.manager,
          kind.table.name,
          olderThanMs,
          LEASE_BATCH,
          kind.kind,
        );
        if (ids.length === 0) break;
        worked += ids.length;
        const rows = this.dataSource.getRepository(kind.table.entity);
        for (const id of ids) {
          const row = await rows.findOneByOrFail({ id } as FindOptionsWhere<LedgerRow>);
          await kind.settle(row).catch(() => undefined);
        }
      }
    return worked;
  }
}

export const NOT_MADE_PROBLEM_TYPE = 'urn:portico:problem:not-made';

/**
 * A write the provider certainly did not make (refused, or found absent once its answer was lost): the
 * attempt is over and final, so no Retry-After; another attempt takes a new Idempotency-Key.
 */
export function notMadeProblem(
  what: string,
  row: LedgerRow,
  extensions: Record<string, unknown> = {},
  another = 'another needs a new Idempotency-Key',
): ProblemException {
  return new ProblemException({
    status: 409,
    type: NOT_MADE_PROBLEM_TYPE,
    title: 'Not made by the provider',
    detail: `The provider never made ${what} ${row.id}: nothing happened there. This attempt is over; ${another}.`,
    // Not `status`: that is the problem's own HTTP status.
    extensions: { ...extensions, id: row.id, resourceStatus: row.status, outcome: 'not-made' },
  });
}

/** A row Portico wrote whose outcome at the provider is not known yet (409), or that it never made. */
export function notKnownYet(what: string, row: LedgerRow): ProblemException {
  if (row.status === 'failed') return notMadeProblem(what, row);
  return new ProblemException({
    status: 409,
    type: 'urn:portico:problem:outcome-unknown',
    title: 'Outcome unknown',
    detail: `The outcome of ${what} ${row.id} is not known yet; Portico settles it with the provider`,
    headers: { 'Retry-After': '5' },
    extensions: { id: row.id, resourceStatus: row.status, outcome: 'unknown' },
  });
}
